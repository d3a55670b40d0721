package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.ibverbs.Verbs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs the {@code ibverbs-write} comparison inside the test VM ({@code scripts/testvm test perf}), where rxe0 and
 * perftest exist; it prints the table and checks only that both sides ran, never a timing.
 */
@Tag("testvm")
class IbverbsWriteGuestTest {
    @Test
    void printsJavaNextToPerftestOnRxe0() throws Exception {
        assumeTrue(
                Verbs.isAvailable() && Verbs.deviceNames().contains("rxe0"), "rxe0 is not present: run in the test VM");
        assertEquals(0, new IbverbsWriteRun().run(new String[] {"rxe0", "65536", "1000"}));
    }
}
