package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The weights bench's CPU count: it counts a child's work beside this process's, and says when it cannot. */
class ProcessCpuTest {
    @Test
    void aChildsWorkIsCounted() throws Exception {
        // a shell that loops until killed: CPU the child uses, none of this process's
        Process child = new ProcessBuilder("sh", "-c", "while :; do :; done").start();
        try {
            ProcessCpu both = new ProcessCpu(List.of(ProcessHandle.current(), child.toHandle()));
            long child0 = cpu(child);
            long both0 = both.nanos();
            // until the kernel has counted 300 ms more of the child's (not a time limit: a loaded machine only takes
            // longer)
            while (cpu(child) < child0 + TimeUnit.MILLISECONDS.toNanos(300)) {
                Thread.sleep(50);
            }
            long both1 = both.nanos();
            assertTrue(both0 >= 0, "known at first: " + both0);
            // the child's 300 ms at least, less a clock tick of rounding on each side
            assertTrue(both1 - both0 >= TimeUnit.MILLISECONDS.toNanos(280), "counted " + (both1 - both0) + " ns");
        } finally {
            child.destroyForcibly().waitFor();
        }
    }

    private static long cpu(Process p) {
        return p.toHandle().info().totalCpuDuration().orElseThrow().toNanos();
    }

    @Test
    void aProcessThatExitedIsUnknown() throws Exception {
        Process child = new ProcessBuilder("true").start();
        assertEquals(0, child.waitFor());
        assertEquals(-1, new ProcessCpu(List.of(ProcessHandle.current(), child.toHandle())).nanos());
    }

    @Test
    void thisProcessAloneIsItsOwnCpuTime() {
        long n = new ProcessCpu(List.of(ProcessHandle.current())).nanos();
        // the JVM has used CPU to get here; the kernel's count covers at least this thread's
        long thread = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        assertTrue(
                n >= thread - TimeUnit.MILLISECONDS.toNanos(20), "process " + n + " ns, this thread " + thread + " ns");
    }
}
