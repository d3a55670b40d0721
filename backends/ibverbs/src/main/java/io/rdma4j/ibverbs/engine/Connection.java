package io.rdma4j.ibverbs.engine;

import io.rdma4j.engine.spi.Completions;
import io.rdma4j.ibverbs.QpInfo;
import io.rdma4j.ibverbs.QueuePair;

/**
 * One RC connection of a lane: its queue pair and the ring of contexts of requests posted and not yet reported. Every
 * field but {@link #remote} belongs to the lane's progress thread once the connection is published; its queue pair is
 * destroyed by that thread too (see {@link ConnectionTable}).
 */
final class Connection {
    final int index;
    final QueuePair qp;
    final long[] ctx;
    /**
     * Whether the request in a ring slot is never reported: a fence the backend posted itself, or a piece of a vectored
     * write other than its last (whose context reports the whole write).
     */
    final boolean[] internal;

    final int mask;
    /** Sequence number of the next request. */
    long head;
    /** Requests below this one were handed to the engine. */
    long reported;
    /** Requests below this one are known complete (successfully unless inside the error range). */
    long doneUpTo;

    long lastSignaled = -1;
    long signaledPending;
    int lastOpcode = -1;
    long lastRemote;
    int lastRkey;
    boolean failed;
    /** Written by the control thread in connect, read by the progress thread. */
    volatile QpInfo remote;
    /** Requests with sequence numbers in [errorFrom, errorUntil) failed: they are reported with errorStatus. */
    long errorFrom;

    long errorUntil;
    int errorStatus;
    String errorText;

    Connection(int index, QueuePair qp, int sqDepth) {
        this.index = index;
        this.qp = qp;
        int cap = Integer.highestOneBit(Math.max(2, sqDepth) * 4 - 1); // at least twice the send queue
        this.ctx = new long[cap];
        this.internal = new boolean[cap];
        this.mask = cap - 1;
    }

    long inFlight() {
        return head - doneUpTo;
    }

    /** The full sequence number of a request whose {@code wr_id} carries its low 32 bits. */
    long fullSeq(long low32) {
        long base = doneUpTo & ~0xFFFF_FFFFL;
        long s = base | low32;
        return s < doneUpTo ? s + (1L << 32) : s;
    }

    /**
     * Marks every request from {@code fromSeq} on as failed with {@code status} and {@code text}: each is known done
     * and reported as an error.
     */
    void failFrom(long fromSeq, int status, String text) {
        failed = true;
        if (errorUntil <= reported) {
            errorFrom = fromSeq;
        }
        errorUntil = head;
        errorStatus = status;
        errorText = text;
        doneUpTo = head;
    }

    /** Reports contexts from {@link #reported} up to {@link #doneUpTo}, as far as {@code out} has room. */
    void drain(Completions out) {
        while (reported < doneUpTo && out.count < out.capacity()) {
            int slot = (int) (reported & mask);
            if (!internal[slot]) {
                int status = reported >= errorFrom && reported < errorUntil ? errorStatus : 0;
                if (status == 0) {
                    out.add(Completions.LOCAL, ctx[slot], 0);
                } else {
                    out.addError(Completions.LOCAL, ctx[slot], status, errorText);
                }
            }
            reported++;
        }
    }

    /** @return whether every request posted has been reported */
    boolean allReported() {
        return reported == head;
    }
}
