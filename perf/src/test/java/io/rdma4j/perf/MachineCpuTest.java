package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class MachineCpuTest {
    /** The lines of a 2-CPU Linux 6.1 /proc/stat that count (intr and softirq lines shortened). */
    private static final String BEFORE = """
            cpu  1000 20 3000 40000 50 60 700 0 0 0
            cpu0 500 10 1500 20000 25 30 350 0 0 0
            cpu1 500 10 1500 20000 25 30 350 0 0 0
            intr 123456 9 0 0
            ctxt 800000
            btime 1764800000
            processes 4321
            procs_running 2
            procs_blocked 0
            softirq 55555 1 2 3
            """;

    private static final String AFTER = """
            cpu  1100 20 3400 40150 50 61 709 0 0 0
            cpu0 550 10 1700 20075 25 30 355 0 0 0
            cpu1 550 10 1700 20075 25 31 354 0 0 0
            intr 123999 9 0 0
            ctxt 800250
            btime 1764800000
            """;

    @Test
    void readsTheAllCpuLineAndContextSwitches() {
        MachineCpu c = MachineCpu.fromStat(BEFORE, 7, 3);
        assertEquals(new MachineCpu(1020, 3000, 760, 40050, 800000, 7, 3), c);
    }

    @Test
    void dividesEachCounterByTheOperations() {
        String line =
                MachineCpu.perOperation(MachineCpu.fromStat(BEFORE, 100, 5), MachineCpu.fromStat(AFTER, 340, 5), 100);
        // ticks are 10 ms: user 100 ticks / 100 writes = 10,000 us each; system 400 ticks; irq 10; idle 150
        assertEquals(
                "per write: user 10000 us, system 40000, irq+softirq 1000, idle 15000 (all CPUs); 2.5 context switches;"
                        + " JIT 240 ms, GC 0 ms in the step",
                line);
    }

    @Test
    void aTextWithoutTheCountersGivesNothing() {
        assertNull(MachineCpu.fromStat("cpu0 1 2 3 4 5 6 7\nctxt 9\n", 0, 0));
        assertNull(MachineCpu.fromStat("cpu  1 2 3 4 5 6 7\n", 0, 0));
        assertNull(MachineCpu.fromStat("cpu  1 2 x 4 5 6 7\nctxt 9\n", 0, 0));
        assertEquals("machine CPU unknown (no /proc/stat)", MachineCpu.perOperation(null, null, 10));
    }
}
