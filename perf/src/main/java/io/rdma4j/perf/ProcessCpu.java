package io.rdma4j.perf;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The CPU time a set of processes used, as the kernel counts it (user and system time of all their threads, in clock
 * ticks: 10 ms on Linux): what a bench whose processes share a few cores spends beside the time it takes. Read before
 * and after a timed step, the difference is the step's CPU cost in all of them.
 */
final class ProcessCpu {
    private final List<ProcessHandle> processes;

    /** @param processes the processes to count, this one among them if it takes part */
    ProcessCpu(List<ProcessHandle> processes) {
        this.processes = List.copyOf(processes);
    }

    /**
     * {@return the CPU nanoseconds all the processes used so far, or -1 when one's is unknown: it exited, or this
     * platform does not say}
     */
    long nanos() {
        long sum = 0;
        for (ProcessHandle p : processes) {
            Optional<Duration> d = p.info().totalCpuDuration();
            if (d.isEmpty() || !p.isAlive()) {
                return -1;
            }
            sum += d.get().toNanos();
        }
        return sum;
    }
}
