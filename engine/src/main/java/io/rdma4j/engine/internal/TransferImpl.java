package io.rdma4j.engine.internal;

import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A transfer's state, shared by the lane threads carrying its chunks; all counters are primitive and lock-free. */
final class TransferImpl implements Transfer {
    static final int RUNNING = 0;
    static final int NOTIFYING = 1;
    static final int DONE = 2;

    /** The engine's transfers in flight, which this one leaves when it ends. */
    private final Set<TransferImpl> active;

    private final RegistrationCache registrations;
    private final EngineMetrics metrics;
    final PeerLink peer;
    final byte op;
    final long total;
    final int localHandle;
    final long localAddress;
    /** Per remote lane: remote address of byte 0 of this transfer's range, and the key. */
    final long[] remoteAddress;

    final long[] remoteKey;
    final Planner.Candidate[] pairs;
    final boolean notify;
    final long tag;
    final boolean crc;
    final int crcValue;
    final long targetGeneration;
    final long targetOffset;
    /** The target buffer's name, for messages. */
    final String targetName;

    final RegistrationCache.Entry registration;
    /** The write batch this transfer moves, whose descriptors map its bytes to both buffers; null for one range. */
    final BatchImpl batch;

    final long startNanos = System.nanoTime();
    final CompletableFuture<TransferResult> future = new CompletableFuture<>();
    final AtomicLong completed = new AtomicLong();
    final AtomicInteger inflight = new AtomicInteger();
    final AtomicLong lanesMask = new AtomicLong();
    final AtomicInteger retries = new AtomicInteger();
    final AtomicInteger state = new AtomicInteger(RUNNING);
    final AtomicInteger released = new AtomicInteger();
    /** Notification sequence once one was assigned (re-sent with the same sequence on retry). */
    volatile long notifySeq = -1;
    /** Notification copies still to complete (one per lane that carried data). */
    final AtomicInteger copiesLeft = new AtomicInteger();
    /** Every notification copy completed and the target's CRC32C verdict is being read. */
    volatile boolean awaitingVerdict;
    /** Reads of the verdict word so far, and how many of them failed (touched only by the lane thread polling). */
    int verdictPolls;

    int verdictFailures;
    volatile boolean terminal;
    volatile ScheduledFuture<?> deadlineTask;
    private List<String> errors;

    TransferImpl(
            Set<TransferImpl> active,
            RegistrationCache registrations,
            EngineMetrics metrics,
            PeerLink peer,
            byte op,
            long total,
            int localHandle,
            long localAddress,
            long[] remoteAddress,
            long[] remoteKey,
            Planner.Candidate[] pairs,
            boolean notify,
            long tag,
            boolean crc,
            int crcValue,
            long targetGeneration,
            long targetOffset,
            String targetName,
            RegistrationCache.Entry registration,
            BatchImpl batch) {
        this.active = active;
        this.registrations = registrations;
        this.metrics = metrics;
        this.peer = peer;
        this.op = op;
        this.total = total;
        this.localHandle = localHandle;
        this.localAddress = localAddress;
        this.remoteAddress = remoteAddress;
        this.remoteKey = remoteKey;
        this.pairs = pairs;
        this.notify = notify;
        this.tag = tag;
        this.crc = crc;
        this.crcValue = crcValue;
        this.targetGeneration = targetGeneration;
        this.targetOffset = targetOffset;
        this.targetName = targetName;
        this.registration = registration;
        this.batch = batch;
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
        return fail(new CancellationException("transfer of " + total + " bytes to " + peer.name + " cancelled"));
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

    boolean isTerminal() {
        return terminal;
    }

    /** One chunk finished; returns true when it was the last data chunk (the caller then notifies or completes). */
    boolean chunkDone(long length, int lane) {
        if (lane < 64) {
            long bit = 1L << lane;
            long m = lanesMask.get();
            while ((m & bit) == 0 && !lanesMask.compareAndSet(m, m | bit)) {
                m = lanesMask.get();
            }
        }
        return completed.addAndGet(length) == total && state.compareAndSet(RUNNING, NOTIFYING);
    }

    void complete() {
        if (state.getAndSet(DONE) == DONE) {
            return;
        }
        terminal = true;
        cancelDeadline();
        List<Integer> lanes = lanes(lanesMask.get());
        finished();
        if (batch != null) {
            // every byte completed, so no lane reads the batch again: free it before the caller hears of the end
            batch.release();
        }
        long took = System.nanoTime() - startNanos;
        TransferEvent.emit(this, lanes, null);
        metrics.completed(op, total, took);
        future.complete(new TransferResult(total, lanes, took, retries.get()));
        maybeRelease();
    }

    /** Immutable lane lists of the masks below 256, made once each: a small transfer's result allocates none. */
    @SuppressWarnings("unchecked")
    private static final List<Integer>[] LANE_LISTS = new List[256];

    /** {@return the lanes set in {@code mask}, ascending, as an immutable list} */
    static List<Integer> lanes(long mask) {
        boolean cached = mask >= 0 && mask < LANE_LISTS.length;
        if (cached && LANE_LISTS[(int) mask] != null) {
            return LANE_LISTS[(int) mask];
        }
        List<Integer> lanes = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            if ((mask & (1L << i)) != 0) {
                lanes.add(i);
            }
        }
        List<Integer> l = List.copyOf(lanes);
        if (cached) {
            LANE_LISTS[(int) mask] = l; // a racing thread builds an equal list: either may stay
        }
        return l;
    }

    /** Fails the transfer once; later calls return false. */
    boolean fail(Throwable cause) {
        if (state.getAndSet(DONE) == DONE) {
            return false;
        }
        terminal = true;
        cancelDeadline();
        finished();
        TransferEvent.emit(this, null, cause);
        metrics.failed(cause);
        future.completeExceptionally(cause);
        maybeRelease();
        return true;
    }

    private void finished() {
        active.remove(this);
        peer.active.remove(this);
    }

    private void cancelDeadline() {
        ScheduledFuture<?> d = deadlineTask;
        if (d != null) {
            d.cancel(false);
        }
    }

    void posted() {
        inflight.incrementAndGet();
    }

    void retired() {
        if (inflight.decrementAndGet() == 0 && terminal) {
            maybeRelease();
        }
    }

    private void maybeRelease() {
        if (inflight.get() == 0 && released.compareAndSet(0, 1)) {
            registrations.release(registration);
            if (batch != null) {
                batch.release(); // after a failure: only now has the network returned every write it posted
            }
        }
    }

    synchronized void recordError(String laneAndError) {
        if (errors == null) {
            errors = new ArrayList<>();
        }
        if (errors.size() < 16) {
            errors.add(laneAndError);
        }
    }

    synchronized String errors() {
        return errors == null ? "none recorded" : String.join("; ", errors);
    }

    TransferException laneFailure(String what) {
        return new io.rdma4j.engine.LaneFailureException(
                what + " to " + peer.name + " failed on every lane: " + errors());
    }
}
