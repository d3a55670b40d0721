package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue.Data;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.zip.CRC32C;

/**
 * The command slot table of one queue: which command identifiers are free, which command each busy one holds, the
 * commands waiting beyond the queue depth, their deadlines, and whether the queue has failed. It is the one owner of
 * that state and its monitor guards it; no other piece of the queue takes this lock, and this class calls nothing
 * outside itself while holding it (no future completes under it), so it nests with no other lock. A command is started
 * here (its slot filled and its capsule built) by the thread that frees a slot or finds one free, and handed on to the
 * sender from there.
 */
final class CommandSlots {
    /** A command beyond the queue depth, waiting for a free slot (the only per-command object beyond the future). */
    private record Waiting(byte[] sqe, Data data, String what, boolean timed, CompletableFuture<Cqe> future) {}

    /** What {@link #release} hands back, in a holder its one caller reuses so that completing allocates nothing. */
    static final class Released {
        /** The completed command's future; null when the queue failed first (and failed the future). */
        CompletableFuture<Cqe> future;
        /** A waiting command started in the freed slot, to be sent; or null. */
        CommandSlot next;
    }

    private final CommandSlot[] slots;
    private final int[] freeCids;
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private final long ioTimeoutNanos;
    private final int inCapsuleLimit;
    private final PduCodec.Settings tx;
    private final CRC32C capsuleCrc = new CRC32C();
    private int freeCount;
    private NvmeException failure;

    /**
     * @param ioTimeoutNanos how long a timed command may stay in flight; 0 or less: for ever
     * @param inCapsuleLimit writes up to this many bytes travel inside the capsule
     * @param tx how capsules are framed
     */
    CommandSlots(int depth, long ioTimeoutNanos, int inCapsuleLimit, PduCodec.Settings tx) {
        this.slots = new CommandSlot[depth];
        this.freeCids = new int[depth];
        this.ioTimeoutNanos = ioTimeoutNanos;
        this.inCapsuleLimit = inCapsuleLimit;
        this.tx = tx;
        int room = CommandSlot.HEADER_ROOM + 4;
        ByteBuffer area = ByteBuffer.allocateDirect(depth * room);
        for (int i = 0; i < depth; i++) {
            ByteBuffer capsule = area.slice(i * room, CommandSlot.HEADER_ROOM).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer digest =
                    area.slice(i * room + CommandSlot.HEADER_ROOM, 4).order(ByteOrder.LITTLE_ENDIAN);
            slots[i] = new CommandSlot(i, capsule, digest);
            freeCids[depth - 1 - i] = i;
        }
        this.freeCount = depth;
    }

    /** @return how many slots there are */
    int depth() {
        return slots.length;
    }

    /** @return the slot of {@code cid}, busy or not; for the sender, which checks {@link CommandSlot#busy} itself */
    CommandSlot slot(int cid) {
        return slots[cid];
    }

    /**
     * Starts a command in a free slot. With none free it waits here until {@link #release} starts it; on a failed queue
     * its future fails at once.
     *
     * @return the started slot, to be sent; null when the command waits or failed
     */
    CommandSlot acquire(byte[] sqe, Data data, String what, boolean timed, CompletableFuture<Cqe> future) {
        NvmeException failed;
        synchronized (this) {
            failed = failure;
            if (failed == null) {
                if (freeCount == 0) {
                    waiting.add(new Waiting(sqe, data, what, timed, future));
                    return null;
                }
                return start(sqe, data, what, timed, future);
            }
        }
        future.completeExceptionally(failed); // outside the lock: the future's callbacks run here
        return null;
    }

    // Called with the lock held.
    private CommandSlot start(byte[] sqe, Data data, String what, boolean timed, CompletableFuture<Cqe> future) {
        CommandSlot s = slots[freeCids[--freeCount]];
        long deadline = timed && ioTimeoutNanos > 0 ? System.nanoTime() + ioTimeoutNanos : Long.MAX_VALUE;
        s.fill(sqe, data, what, timed, future, deadline, inCapsuleLimit, tx, capsuleCrc);
        s.generation++;
        s.busy = true;
        return s;
    }

    /** @return the slot of {@code cid} when it holds a command, else null */
    synchronized CommandSlot inFlight(int cid) {
        return cid < slots.length && slots[cid].busy ? slots[cid] : null;
    }

    /**
     * Frees a completed command's slot (copying bounced read data home) and starts the oldest waiting command in it.
     *
     * @param out receives the completed command's future and the started command
     */
    synchronized void release(CommandSlot s, Released out) {
        out.next = null;
        if (!s.busy) {
            out.future = null; // failed meanwhile: fail() completed the future
            return;
        }
        out.future = s.future;
        s.empty();
        s.busy = false;
        freeCids[freeCount++] = s.cid;
        Waiting w = waiting.poll();
        if (w != null && failure == null) {
            out.next = start(w.sqe(), w.data(), w.what(), w.timed(), w.future());
        }
    }

    /**
     * Marks the queue failed and empties every busy slot and the waiting line. Idempotent.
     *
     * @return the futures to fail, busy ones first; null when the queue had failed already
     */
    synchronized List<CompletableFuture<Cqe>> failAll(NvmeException why) {
        if (failure != null) {
            return null;
        }
        failure = why;
        List<CompletableFuture<Cqe>> victims = new ArrayList<>();
        for (CommandSlot s : slots) {
            if (s.busy) {
                victims.add(s.future);
                s.busy = false;
                s.abandon();
            }
        }
        for (Waiting w : waiting) {
            victims.add(w.future());
        }
        waiting.clear();
        return victims;
    }

    /** @return null while the queue works, else why it does not */
    synchronized NvmeException failure() {
        return failure;
    }

    /**
     * @return the name of a timed command past its deadline at {@code now} (named here: once the lock is gone the slot
     *     may be reused), or null when none is or the queue failed
     */
    synchronized String late(long now) {
        if (failure != null) {
            return null;
        }
        for (CommandSlot s : slots) {
            if (s.busy && s.timed && now - s.deadline > 0) {
                return s.what();
            }
        }
        return null;
    }

    /** @return how many slots are free now */
    synchronized int free() {
        return freeCount;
    }

    /** @return how many commands wait for a slot now */
    synchronized int waiting() {
        return waiting.size();
    }
}
