package io.rdma4j.nvmeof;

/**
 * The queue IDs a controller reserved at bring-up for {@link PolledQueue}s, beyond its own I/O queues: which are free.
 * Thread-safe; one per session, so a reconnect starts with all free again.
 */
final class PolledQids {
    private final int first;
    private final boolean[] used;

    /** @param first the first reserved queue ID; {@code count} follow it */
    PolledQids(int first, int count) {
        this.first = first;
        this.used = new boolean[Math.max(0, count)];
    }

    /**
     * @return a free queue ID, now taken
     * @throws IllegalStateException when all are taken, saying how to get more
     */
    synchronized int take() {
        for (int i = 0; i < used.length; i++) {
            if (!used[i]) {
                used[i] = true;
                return first + i;
            }
        }
        throw new IllegalStateException(
                used.length == 0
                        ? "this controller reserved no polled queue: connect with ConnectOptions.withPolledQueues(n)"
                                + " (and a target that grants that many more queues)"
                        : "all " + used.length
                                + " polled queues reserved at connect are open: close one, or connect with"
                                + " ConnectOptions.withPolledQueues(n) for more");
    }

    /** Frees {@code qid}, taken from here. */
    synchronized void give(int qid) {
        used[qid - first] = false;
    }
}
