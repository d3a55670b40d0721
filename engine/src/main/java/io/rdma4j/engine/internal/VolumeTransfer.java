package io.rdma4j.engine.internal;

import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferResult;
import io.rdma4j.engine.TransferTimeoutException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A write to or read from a volume: its pieces, per namespace in ascending order, are issued up to that namespace's
 * window at a time, every namespace at once; a completion frees a slot and the dispatcher issues the next piece (never
 * the completing thread, which is a queue's reader and must not block on a send). Each piece's memory comes from its
 * {@link PieceMemory} just before it is issued: a slice of the caller's segment or of a host copy, or (device memory,
 * {@link DeviceStaging}) host memory the piece's bytes were just copied into (a write) or will be copied on from (a
 * read, on the piece memory's lane, before the piece counts as done), so device copies overlap the I/O of the other
 * pieces. {@code settled} frees the host memory once the transfer is over and no piece is in flight any more (a failed
 * transfer's pieces finish on their own).
 */
final class VolumeTransfer implements Transfer {
    /** Where each piece's bytes sit in host memory while it is in flight. */
    interface PieceMemory {
        /**
         * {@return host memory for the range's bytes {@code [rangeOffset, rangeOffset + length)}, holding them when
         * writing} Called on the thread about to issue the piece.
         *
         * @throws RuntimeException when the bytes could not be put there (a device copy failed)
         */
        MemorySegment acquire(long rangeOffset, long length);

        /** The piece that was given {@code piece} finished, successfully or not: its memory may be reused. */
        void release(MemorySegment piece);

        /**
         * {@return where a read piece's bytes go on from host memory, one piece at a time in completion order, or null
         * when the piece's memory is where the caller wants them} A queue's reader completes pieces and must not block
         * on a device copy, so {@link #land} runs there.
         */
        default Executor lane() {
            return null;
        }

        /**
         * Puts a completed read piece's bytes where the caller wants them (the device), on {@link #lane()}, before the
         * piece counts as done and its memory is released.
         *
         * @throws RuntimeException when the copy failed
         */
        default void land(long rangeOffset, MemorySegment piece) {}

        /** {@return slices of {@code memory} from {@code offset}: the caller's memory, or a whole-range host copy} */
        static PieceMemory slices(MemorySegment memory, long offset) {
            return new PieceMemory() {
                @Override
                public MemorySegment acquire(long rangeOffset, long length) {
                    return memory.asSlice(offset + rangeOffset, length);
                }

                @Override
                public void release(MemorySegment piece) {}
            };
        }
    }

    private final VolumeImpl volume;
    private final boolean write;
    private final PieceMemory pieceMemory;
    private final long volumeOffset;
    private final long total;
    private final StripeMap.Pieces pieces;
    private final Executor dispatcher;
    private final int[] next;
    private final int[] inflight;
    private final AtomicBoolean[] scheduled;
    private final Runnable[] pumps;
    private final AtomicLong completed = new AtomicLong();
    private final CompletableFuture<TransferResult> future = new CompletableFuture<>();
    private final long startNanos = System.nanoTime();
    private volatile boolean terminal;
    private final Runnable landed;
    private final Runnable settled;
    private final AtomicBoolean settledOnce = new AtomicBoolean();
    private int inFlight;
    /** Pieces handed to a namespace so far (guarded by this). */
    private int issued;
    /** In {@link #start}, on the caller's thread. */
    private boolean starting;

    volatile ScheduledFuture<?> deadlineTask;

    /**
     * @param landed null, or what makes a completed read's bytes visible to the caller (a device's view of what NICs
     *     wrote into it); it runs off the queues' threads before the future completes, and its failure fails the
     *     transfer
     * @param settled null, or what runs once the transfer is over and no piece is in flight
     */
    VolumeTransfer(
            VolumeImpl volume,
            boolean write,
            PieceMemory pieceMemory,
            long volumeOffset,
            long length,
            Executor dispatcher,
            Runnable landed,
            Runnable settled) {
        this.landed = landed;
        this.settled = settled;
        this.volume = volume;
        this.write = write;
        this.pieceMemory = pieceMemory;
        this.volumeOffset = volumeOffset;
        this.total = length;
        this.dispatcher = dispatcher;
        this.pieces = volume.map.split(volumeOffset, length, volume.maxPiece);
        int n = volume.namespaces.length;
        this.next = new int[n];
        this.inflight = new int[n];
        this.scheduled = new AtomicBoolean[n];
        this.pumps = new Runnable[n];
        for (int m = 0; m < n; m++) {
            int member = m;
            scheduled[m] = new AtomicBoolean();
            pumps[m] = () -> {
                scheduled[member].set(false);
                pump(member);
            };
        }
    }

    /**
     * Issues the first window of every namespace from the caller's thread (never a queue's reader); refills go through
     * the dispatcher.
     */
    void start() {
        starting = true;
        try {
            for (int m = 0; m < pumps.length; m++) {
                if (pieces.count(m) > 0) {
                    pump(m);
                }
            }
        } finally {
            starting = false;
        }
    }

    private void schedule(int m) {
        if (!terminal && scheduled[m].compareAndSet(false, true)) {
            try {
                dispatcher.execute(pumps[m]);
            } catch (RuntimeException e) {
                fail(new TransferException(what() + ": the volume's dispatcher stopped (" + e + ")", e));
            }
        }
    }

    /** Issues pieces of namespace {@code m} until its window is full or none is left. */
    private void pump(int m) {
        while (true) {
            int i;
            synchronized (this) {
                if (terminal || next[m] >= pieces.count(m) || inflight[m] >= volume.window[m]) {
                    return;
                }
                i = next[m]++;
                inflight[m]++;
                inFlight++;
            }
            issue(m, i);
        }
    }

    private void issue(int m, int i) {
        long len = pieces.length[m][i];
        long r = pieces.rangeOffset[m][i];
        MemorySegment slice;
        try {
            slice = pieceMemory.acquire(r, len);
        } catch (RuntimeException e) {
            notStaged(m, r, len, e);
            return;
        }
        synchronized (this) {
            issued++;
        }
        CompletableFuture<Void> f;
        try {
            f = write
                    ? volume.namespaces[m].write(pieces.memberOffset[m][i], slice)
                    : volume.namespaces[m].read(pieces.memberOffset[m][i], slice);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((v, t) -> {
            Executor lane = write || t != null || terminal ? null : pieceMemory.lane();
            if (lane == null) {
                pieceMemory.release(slice);
                done(m, i, t);
                return;
            }
            try {
                lane.execute(() -> land(m, i, r, slice));
            } catch (RuntimeException e) {
                pieceMemory.release(slice);
                notLanded(m, i, e);
            }
        });
    }

    /**
     * On the piece memory's lane: copies a read piece's bytes on (to the device) while the pieces behind it are still
     * moving, then counts it done. A transfer that already failed or was cancelled copies nothing more.
     */
    private void land(int m, int i, long r, MemorySegment slice) {
        RuntimeException failed = null;
        if (!terminal) {
            try {
                pieceMemory.land(r, slice);
            } catch (RuntimeException e) {
                failed = e;
            }
        }
        pieceMemory.release(slice);
        if (failed == null) {
            done(m, i, null);
        } else {
            notLanded(m, i, failed);
        }
    }

    /** A read piece arrived but its bytes could not be copied on: the transfer fails by name. */
    private void notLanded(int m, int i, RuntimeException e) {
        boolean drained;
        synchronized (this) {
            inflight[m]--;
            drained = --inFlight == 0 && terminal;
        }
        if (drained) {
            settle();
        }
        long r = pieces.rangeOffset[m][i];
        fail(new TransferException(
                what() + ": range bytes " + r + ".." + (r + pieces.length[m][i]) + " arrived in host memory, but"
                        + " copying them to the device failed; pieces already issued were left to finish: "
                        + e.getMessage(),
                e));
    }

    /**
     * A piece's bytes could not be put in host memory: it is not issued and the transfer fails. When that was the first
     * piece, while starting, nothing was issued and the caller's call throws, as for any check.
     */
    private void notStaged(int m, long r, long len, RuntimeException e) {
        boolean first;
        synchronized (this) {
            inflight[m]--;
            inFlight--;
            first = starting && issued == 0;
        }
        TransferException failure = new TransferException(
                what() + ": copying the device memory to host failed (range bytes " + r + ".." + (r + len) + "), "
                        + (first ? "nothing was issued" : "pieces already issued were left to finish") + ": "
                        + e.getMessage(),
                e);
        fail(failure);
        if (first) {
            throw failure;
        }
    }

    private void done(int m, int i, Throwable t) {
        boolean drained;
        synchronized (this) {
            inflight[m]--;
            drained = --inFlight == 0 && terminal;
        }
        if (drained) {
            settle();
        }
        if (t != null) {
            Throwable c = unwrap(t);
            long r = pieces.rangeOffset[m][i];
            fail(new TransferException(
                    what() + " failed at " + volume.namespaces[m].describe() + " (volume bytes " + (volumeOffset + r)
                            + ".."
                            + (volumeOffset + r + pieces.length[m][i]) + ", namespace byte " + pieces.memberOffset[m][i]
                            + ", via "
                            + volume.nics[m].label() + "): " + c.getMessage(),
                    c));
            return;
        }
        if (completed.addAndGet(pieces.length[m][i]) == total) {
            complete();
        } else {
            schedule(m);
        }
    }

    private String what() {
        return (write ? "write of " : "read of ") + total + " bytes " + (write ? "to" : "from") + " volume "
                + volume.name;
    }

    private void complete() {
        synchronized (this) {
            if (terminal) {
                return;
            }
            terminal = true;
        }
        finish();
        List<Integer> used = new ArrayList<>();
        for (int m = 0; m < pumps.length; m++) {
            if (pieces.count(m) > 0) {
                used.add(m);
            }
        }
        long nanos = System.nanoTime() - startNanos;
        volume.owner.metrics.volumeCompleted(write, total, nanos);
        TransferResult result = new TransferResult(total, used, nanos, 0);
        if (landed == null) {
            future.complete(result);
            settle();
            return;
        }
        // it may block (a device flush): never on the queue's reader that completed the last piece
        Thread.ofVirtual().name("rdma4j-volume-device").start(() -> {
            try {
                landed.run();
                future.complete(result);
            } catch (RuntimeException e) {
                future.completeExceptionally(new TransferException(
                        what() + ": the bytes arrived in device memory, but making them visible to the device failed: "
                                + e.getMessage(),
                        e));
            } finally {
                settle();
            }
        });
    }

    private void settle() {
        if (settled != null && settledOnce.compareAndSet(false, true)) {
            settled.run();
        }
    }

    /** Fails the transfer once (no further piece is issued; those in flight finish on their own). */
    boolean fail(Throwable cause) {
        boolean drained;
        synchronized (this) {
            if (terminal) {
                return false;
            }
            terminal = true;
            drained = inFlight == 0;
        }
        finish();
        volume.owner.metrics.volumeFailed(cause);
        future.completeExceptionally(cause);
        if (drained) {
            settle();
        }
        return true;
    }

    private void finish() {
        ScheduledFuture<?> d = deadlineTask;
        if (d != null) {
            d.cancel(false);
        }
        volume.active.remove(this);
    }

    void deadlinePassed(java.time.Duration deadline) {
        fail(new TransferTimeoutException(what() + " did not finish within " + deadline.toMillis() + " ms ("
                + completed.get() + " bytes done);" + " pieces not yet issued were dropped"));
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Override
    public CompletableFuture<TransferResult> future() {
        return future;
    }

    @Override
    public long bytesCompleted() {
        return completed.get();
    }

    @Override
    public long bytesTotal() {
        return total;
    }

    @Override
    public boolean cancel() {
        return fail(new CancellationException(what() + " cancelled (" + completed.get() + " bytes done)"));
    }

    @Override
    public TransferResult join() {
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** @return pieces per namespace, for plans */
    StripeMap.Pieces pieces() {
        return pieces;
    }
}
