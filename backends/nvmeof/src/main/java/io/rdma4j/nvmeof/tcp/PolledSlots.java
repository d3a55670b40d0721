package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The command slots of a polled queue, as parallel primitive arrays indexed by command identifier: which are free, and
 * for each busy one its caller's tag, its memory, how far its data has moved and its deadline. A slot's capsule header
 * lives in native memory ({@link #capsules}), written in place for every command, so starting and finishing a command
 * allocate nothing. One thread at a time uses it, so it has no lock.
 */
final class PolledSlots {
    /** Room for a capsule or data PDU header: 72-byte CapsuleCmd + digest, padded to the largest alignment (128). */
    static final int HEADER_ROOM = 256;

    final int depth;
    /** Capsule headers, {@link #HEADER_ROOM} bytes a slot. */
    final MemorySegment capsules;
    /** In-capsule data digests, 4 bytes a slot. */
    final MemorySegment capsuleDigests;

    final long[] tag;
    final MemorySegment[] memory;
    final long[] offset;
    final int[] length;
    final boolean[] toController;
    final boolean[] inCapsule;
    final boolean[] busy;
    /** Data bytes received (reads) or asked for by R2T (writes) so far. */
    final long[] moved;

    final long[] deadline;
    /** The read's memory was freed before its data arrived: the data was drained and the command fails. */
    final boolean[] lost;

    private final int[] free;
    private int freeCount;

    PolledSlots(int depth, MemorySegment capsules, MemorySegment capsuleDigests) {
        this.depth = depth;
        this.capsules = capsules;
        this.capsuleDigests = capsuleDigests;
        tag = new long[depth];
        memory = new MemorySegment[depth];
        offset = new long[depth];
        length = new int[depth];
        toController = new boolean[depth];
        inCapsule = new boolean[depth];
        busy = new boolean[depth];
        moved = new long[depth];
        deadline = new long[depth];
        lost = new boolean[depth];
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
        moved[cid] = 0;
        lost[cid] = false;
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

    /** @return the busy slot of {@code cid}, or -1 when {@code cid} names no command in flight */
    int inFlight(int cid) {
        return cid < depth && busy[cid] ? cid : -1;
    }

    /** @return the earliest deadline of a busy slot whose deadline is before {@code now}, as its cid; or -1 */
    int late(long now) {
        for (int i = 0; i < depth; i++) {
            if (busy[i] && deadline[i] - now < 0) {
                return i;
            }
        }
        return -1;
    }

    /** Names the command in {@code cid}'s slot for an error message, from its capsule (the cold path). */
    String describe(int cid) {
        byte[] sqe = new byte[Sqe.SIZE];
        MemorySegment.copy(capsules, ValueLayout.JAVA_BYTE, (long) cid * HEADER_ROOM + 8, sqe, 0, Sqe.SIZE);
        return Sqe.describe(sqe);
    }
}
