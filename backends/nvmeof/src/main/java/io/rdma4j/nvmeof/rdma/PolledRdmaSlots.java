package io.rdma4j.nvmeof.rdma;

import java.lang.foreign.MemorySegment;

/**
 * The command slots of a polled NVMe/RDMA queue, as parallel primitive arrays indexed by command identifier: which are
 * free, and for each busy one its caller's tag, its memory, whether its SEND and its response completed, the response's
 * status and its deadline. A slot is free again only once both completed, since its capsule slot is reused. One thread
 * at a time uses it, so it has no lock, and starting or finishing a command allocates nothing.
 */
final class PolledRdmaSlots {
    final int depth;
    final long[] tag;
    final MemorySegment[] memory;
    final boolean[] busy;
    final boolean[] sent;
    final boolean[] answered;
    /** The response's status field without its phase bit. */
    final int[] status;

    final long[] deadline;
    private final int[] free;
    private int freeCount;

    PolledRdmaSlots(int depth) {
        this.depth = depth;
        tag = new long[depth];
        memory = new MemorySegment[depth];
        busy = new boolean[depth];
        sent = new boolean[depth];
        answered = new boolean[depth];
        status = new int[depth];
        deadline = new long[depth];
        free = new int[depth];
        for (int i = 0; i < depth; i++) {
            free[i] = depth - 1 - i;
        }
        freeCount = depth;
    }

    /** @return a free slot's command identifier, now busy, or -1 when every slot is busy */
    int take() {
        if (freeCount == 0) {
            return -1;
        }
        int cid = free[--freeCount];
        busy[cid] = true;
        sent[cid] = false;
        answered[cid] = false;
        status[cid] = 0;
        return cid;
    }

    /** Frees {@code cid}'s slot and forgets its memory. */
    void release(int cid) {
        busy[cid] = false;
        memory[cid] = null;
        free[freeCount++] = cid;
    }

    /** @return commands in flight */
    int inFlight() {
        return depth - freeCount;
    }

    /** @return a busy slot whose deadline is before {@code now}, as its cid; or -1 */
    int late(long now) {
        for (int i = 0; i < depth; i++) {
            if (busy[i] && deadline[i] - now < 0) {
                return i;
            }
        }
        return -1;
    }
}
