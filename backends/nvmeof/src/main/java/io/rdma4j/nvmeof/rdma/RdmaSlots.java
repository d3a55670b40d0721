package io.rdma4j.nvmeof.rdma;

import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Cqe;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The command slot table of one NVMe/RDMA queue, as {@code TcpQueue}'s: which command identifiers are free, which
 * request each busy one holds (until both its SEND and its response completed, since the capsule slot of the same index
 * is reused), the requests waiting beyond the queue depth, their deadlines, and whether the queue has failed. Its
 * monitor guards that state and nothing else; it calls nothing outside itself while holding it, and posts nothing: a
 * request it starts is returned for the queue to post.
 */
final class RdmaSlots {
    /** What {@link #acquire} did with a request. */
    enum Taken {
        /** It has a command identifier: post it. */
        STARTED,
        /** It waits for a slot; {@link #release} starts it. */
        WAITING,
        /** The queue has failed ({@link #failure()}). */
        FAILED
    }

    /** What {@link #release} hands back, in a holder the poller reuses. */
    static final class Released {
        /** The request still held its slot (false: the queue failed it meanwhile). */
        boolean mine;
        /** A waiting request started in the freed slot, to be posted; or null. */
        RdmaRequest next;
    }

    private final RdmaRequest[] slots;
    private final int[] freeCids;
    private final ArrayDeque<RdmaRequest> waiting = new ArrayDeque<>();
    private final long ioTimeoutNanos;
    private int freeCount;
    private NvmeException failure;

    /** @param ioTimeoutNanos how long a timed command may stay in flight; 0 or less: for ever */
    RdmaSlots(int depth, long ioTimeoutNanos) {
        this.slots = new RdmaRequest[depth];
        this.freeCids = new int[depth];
        for (int i = 0; i < depth; i++) {
            freeCids[depth - 1 - i] = i;
        }
        this.freeCount = depth;
        this.ioTimeoutNanos = ioTimeoutNanos;
    }

    /** Gives {@code r} a free command identifier, or queues it when none is free. */
    synchronized Taken acquire(RdmaRequest r) {
        if (failure != null) {
            return Taken.FAILED;
        }
        if (freeCount == 0) {
            waiting.add(r);
            return Taken.WAITING;
        }
        start(r);
        return Taken.STARTED;
    }

    // Called with the lock held.
    private void start(RdmaRequest r) {
        int cid = freeCids[--freeCount];
        r.cid = cid;
        slots[cid] = r;
        if (r.timed && ioTimeoutNanos > 0) {
            r.deadline = System.nanoTime() + ioTimeoutNanos;
        }
    }

    /**
     * Records a response.
     *
     * @return the request to finish now, or null while its SEND has not completed
     */
    synchronized RdmaRequest received(Cqe cqe) {
        RdmaRequest r = cqe.cid() < slots.length ? slots[cqe.cid()] : null;
        if (r == null || r.cqe != null) {
            throw new NvmeProtocolException(
                    "a completion names command identifier " + cqe.cid() + ", which has no command in flight");
        }
        r.cqe = cqe;
        return r.sent ? r : null; // the capsule slot is reused only once its SEND completed too
    }

    /**
     * Records a completed SEND.
     *
     * @return the request to finish now, or null while its response has not arrived (or it already failed)
     */
    synchronized RdmaRequest sent(int cid) {
        RdmaRequest r = cid >= 0 && cid < slots.length ? slots[cid] : null;
        if (r == null) {
            return null; // the command already failed
        }
        r.sent = true;
        return r.cqe != null ? r : null;
    }

    /** Frees {@code r}'s slot and starts the oldest waiting request in it. */
    synchronized void release(RdmaRequest r, Released out) {
        out.next = null;
        out.mine = slots[r.cid] == r;
        if (!out.mine) {
            return;
        }
        slots[r.cid] = null;
        freeCids[freeCount++] = r.cid;
        RdmaRequest next = waiting.poll();
        if (next != null && failure == null) {
            start(next);
            out.next = next;
        }
    }

    /**
     * Marks the queue failed and empties every slot and the waiting line. Idempotent.
     *
     * @return the requests to fail; null when the queue had failed already
     */
    synchronized List<RdmaRequest> failAll(NvmeException why) {
        if (failure != null) {
            return null;
        }
        failure = why;
        List<RdmaRequest> victims = new ArrayList<>();
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                victims.add(slots[i]);
                slots[i] = null;
            }
        }
        victims.addAll(waiting);
        waiting.clear();
        return victims;
    }

    /** @return null while the queue works, else why it does not */
    synchronized NvmeException failure() {
        return failure;
    }

    /** @return a timed request past its deadline at {@code now}, or null when none is or the queue failed */
    synchronized RdmaRequest late(long now) {
        if (failure != null) {
            return null;
        }
        for (RdmaRequest r : slots) {
            if (r != null && r.timed && now - r.deadline > 0) {
                return r;
            }
        }
        return null;
    }

    /** Deregisters the bounce buffers of requests still waiting. */
    synchronized void unstageWaiting() {
        for (RdmaRequest r : waiting) {
            r.unstage();
        }
    }
}
