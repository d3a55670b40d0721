package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.ibverbs.Verbs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs the {@code engine-ibverbs} comparison inside the test VM ({@code scripts/testvm test perf}), where rxe0 and
 * perftest exist: the engine on the ibverbs backend, two engines meeting through the directory. It prints the table and
 * checks only that every side ran (the engine's writes landed, its final tags arrived), never a timing.
 */
@Tag("testvm")
class EngineIbverbsGuestTest {
    @Test
    void printsTheEngineNextToPerftestOnRxe0() throws Exception {
        assumeTrue(
                Verbs.isAvailable() && Verbs.deviceNames().contains("rxe0"), "rxe0 is not present: run in the test VM");
        // both engines in this JVM: a second JVM under emulation has spent over 30 s connecting to the directory
        System.setProperty("rdma4j.bench.inProcess", "true");
        try {
            assertEquals(0, new EngineIbverbsRun().run(new String[] {"rxe0", "65536", "1000"}));
        } finally {
            System.clearProperty("rdma4j.bench.inProcess");
        }
    }
}
