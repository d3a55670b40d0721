package io.rdma4j.perf.soak;

import java.util.Arrays;

/** Every latency of one kind of operation, in microseconds, for its percentiles at the end. */
final class Latencies {
    private long[] micros = new long[1024];
    private int count;

    synchronized void add(long nanos) {
        if (count == micros.length) {
            micros = Arrays.copyOf(micros, count * 2);
        }
        micros[count++] = nanos / 1000;
    }

    synchronized int count() {
        return count;
    }

    /** {@return the {@code p}-th percentile in microseconds (nearest rank), or -1 when there is none} */
    synchronized long percentile(double p) {
        if (count == 0) {
            return -1;
        }
        long[] sorted = Arrays.copyOf(micros, count);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100 * count);
        return sorted[Math.max(0, rank - 1)];
    }
}
