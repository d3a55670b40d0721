package io.rdma4j.ffi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

class ExtendedSuiteTest {
    /** A sample of the extended suite; run only through the engine below (Surefire skips nested classes). */
    @Extended
    static class Sample {
        @Test
        void readsCaptures() {
            assertTrue(Files.isDirectory(TestPaths.shared()));
        }

        @Test
        void abortsOnAnAssumption() {
            Assumptions.assumeTrue(false, "a capture tool is missing");
        }
    }

    private static Events run(Path shared) {
        String old = System.getProperty("rdma4j.shared");
        System.setProperty("rdma4j.shared", shared.toString());
        try {
            return EngineTestKit.engine("junit-jupiter")
                    .selectors(selectClass(Sample.class))
                    .configurationParameter(ExtendedSuite.RECORD_PARAMETER, "false")
                    .execute()
                    .testEvents();
        } finally {
            if (old == null) {
                System.clearProperty("rdma4j.shared");
            } else {
                System.setProperty("rdma4j.shared", old);
            }
        }
    }

    @Test
    void skipsEachTestWithTheCountedReasonWhenTheCapturesAreAbsent(@TempDir Path dir) {
        Events events = run(dir.resolve("no-such-shared"));
        assertEquals(2, events.skipped().count(), "each test of the suite is skipped on its own");
        assertEquals(0, events.started().count());
        List<String> reasons = events.skipped().stream()
                .map(e -> e.getPayload(String.class).orElse(""))
                .toList();
        assertTrue(
                reasons.stream().allMatch(r -> r.startsWith(ExtendedSuite.SKIP_MARK) && r.contains("no-such-shared")),
                reasons::toString);
    }

    @Test
    void turnsASkipIntoAFailureWhenTheCapturesArePresent(@TempDir Path dir) {
        Events events = run(dir);
        assertEquals(1, events.succeeded().count());
        assertEquals(1, events.failed().count(), "an aborted extended test fails while ../shared is present");
        assertEquals(0, events.aborted().count());
        String message = events.failed().stream()
                .findFirst()
                .orElseThrow()
                .getRequiredPayload(org.junit.platform.engine.TestExecutionResult.class)
                .getThrowable()
                .orElseThrow()
                .getMessage();
        assertTrue(message.contains("must not skip") && message.contains("a capture tool is missing"), message);
    }
}
