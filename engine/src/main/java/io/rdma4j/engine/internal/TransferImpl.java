package io.rdma4j.engine.internal;

import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferResult;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;

/**
 * A transfer's state, shared by the lane threads carrying its chunks. Its counters are plain fields updated through
 * {@link VarHandle}s rather than atomic objects, it links itself into the engine's {@link ActiveTransfers}, and a
 * transfer one lane pair carries whole is its own {@link Stripe}: a small write allocates this object, its future and
 * its result, nothing beside them.
 *
 * <p>The {@link Preparer} makes it once every argument is checked; the {@link Dispatcher} launches it.
 */
final class TransferImpl extends Stripe implements Transfer {
    private static final VarHandle COMPLETED;
    private static final VarHandle INFLIGHT;
    private static final VarHandle LANES_MASK;
    private static final VarHandle RETRIES;
    private static final VarHandle STATE;
    private static final VarHandle RELEASED;
    private static final VarHandle COPIES_LEFT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            COMPLETED = l.findVarHandle(TransferImpl.class, "completed", long.class);
            INFLIGHT = l.findVarHandle(TransferImpl.class, "inflight", int.class);
            LANES_MASK = l.findVarHandle(TransferImpl.class, "lanesMask", long.class);
            RETRIES = l.findVarHandle(TransferImpl.class, "retries", int.class);
            STATE = l.findVarHandle(TransferImpl.class, "state", int.class);
            RELEASED = l.findVarHandle(TransferImpl.class, "released", int.class);
            COPIES_LEFT = l.findVarHandle(TransferImpl.class, "copiesLeft", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final int RUNNING = 0;
    static final int NOTIFYING = 1;
    static final int DONE = 2;

    /** The engine's transfers in flight, which this one leaves when it ends. */
    private final ActiveTransfers active;

    private final RegistrationCache registrations;
    private final EngineMetrics metrics;
    final PeerLink peer;
    final byte op;
    final long total;
    /** The local buffer and where in it the range starts (for device memory and the CRC32C). */
    final BufferImpls.Local local;

    final long localOffset;
    final int localHandle;
    final long localAddress;
    /**
     * Per remote lane: the address of byte 0 of the target buffer (the buffer's own array, shared by its transfers),
     * and the key; byte 0 of this transfer's range is {@link #remoteOffset} further.
     */
    private final long[] remoteBase;

    final long remoteOffset;
    final long[] remoteKey;
    final Planner.Candidate[] pairs;
    /** How the bytes are striped over lane pairs; null when one pair carries them whole (this is then its stripe). */
    final Planner.Assignment assignment;

    final TransferOptions options;
    final boolean notify;
    final long tag;
    final boolean crc;
    /** The source range's CRC32C, computed at launch (after device memory reached its host staging). */
    int crcValue;

    final long targetGeneration;
    final long targetOffset;
    /** The target buffer's name, for messages. */
    final String targetName;

    final RegistrationCache.Entry registration;
    /** The write batch this transfer moves, whose descriptors map its bytes to both buffers; null for one range. */
    final BatchImpl batch;

    /** When the transfer was launched (after its CRC32C was computed), as the result's time counts it. */
    long startNanos = System.nanoTime();

    final CompletableFuture<TransferResult> future = new CompletableFuture<>();
    private volatile long completed;
    private volatile int inflight;
    private volatile long lanesMask;
    private volatile int retries;
    /** {@link #RUNNING}, {@link #NOTIFYING} or {@link #DONE}. */
    private volatile int state = RUNNING;

    private volatile int released;
    /** Notification sequence once one was assigned (re-sent with the same sequence on retry). */
    volatile long notifySeq = -1;
    /** Notification copies still to complete (one per lane that carried data). */
    private volatile int copiesLeft;
    /** Every notification copy completed and the target's CRC32C verdict is being read. */
    volatile boolean awaitingVerdict;
    /** Reads of the verdict word so far, and how many of them failed (touched only by the lane thread polling). */
    int verdictPolls;

    int verdictFailures;
    volatile boolean terminal;
    volatile ScheduledFuture<?> deadlineTask;
    private List<String> errors;
    /** Which list of {@link ActiveTransfers} holds this transfer (-1: none), and its neighbours there. */
    volatile int activeList = -1;

    TransferImpl activePrev;
    TransferImpl activeNext;

    /**
     * A checked transfer, holding a reference on its local registration: striped over {@code assignment}, or carried
     * whole by {@code single} when one lane pair takes it (then {@code assignment} is null).
     */
    TransferImpl(
            ActiveTransfers active,
            RegistrationCache registrations,
            EngineMetrics metrics,
            byte op,
            BufferImpls.Local local,
            long localOffset,
            BufferImpls.Remote remote,
            long remoteOffset,
            long length,
            TransferOptions options,
            PeerLink link,
            Planner.Candidate[] pairs,
            Planner.Assignment assignment,
            Planner.Candidate single,
            BatchImpl batch) {
        super(
                single == null ? -1 : single.localLane(),
                single == null ? -1 : single.remoteLane(),
                single == null ? -1 : link.connection[single.localLane()],
                single == null ? 0 : length);
        this.active = active;
        this.registrations = registrations;
        this.metrics = metrics;
        this.peer = link;
        this.op = op;
        this.total = length;
        this.local = local;
        this.localOffset = localOffset;
        this.registration = local.entry;
        this.localHandle = local.entry.registration().handle();
        this.localAddress = local.segment.address() + localOffset;
        this.remoteBase = remote.address;
        this.remoteOffset = remoteOffset;
        this.remoteKey = remote.key;
        this.pairs = pairs;
        this.assignment = assignment;
        this.options = options;
        this.notify = options.notifies();
        this.tag = options.tag();
        this.crc = options.crc32c();
        this.targetGeneration = remote.generation();
        this.targetOffset = batch == null ? remoteOffset : batch.targetOffset[0];
        this.targetName = remote.shortName;
        this.batch = batch;
    }

    @Override
    public CompletableFuture<TransferResult> future() {
        return future;
    }

    @Override
    public long bytesCompleted() {
        return completed;
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

    /** {@return the address of byte 0 of this transfer's range at the target, through remote lane {@code lane}} */
    long remoteAddress(int lane) {
        return remoteBase[lane] + remoteOffset;
    }

    /** {@return the lanes that carried data, one bit each (lanes 0 to 63)} */
    long lanesMask() {
        return lanesMask;
    }

    /** {@return how many chunks, notification copies and verdict reads were sent again} */
    int retries() {
        return retries;
    }

    /** Counts one more thing sent again. */
    void retried() {
        RETRIES.getAndAdd(this, 1);
    }

    /** A transfer of no bytes goes straight to its notification. */
    void notifying() {
        state = NOTIFYING;
    }

    /** Its notification goes out as {@code n} copies, one per lane that carried data. */
    void copies(int n) {
        copiesLeft = n;
    }

    /** {@return whether the copy that just completed was the last} */
    boolean copyDone() {
        return (int) COPIES_LEFT.getAndAdd(this, -1) == 1;
    }

    /** One chunk finished; returns true when it was the last data chunk (the caller then notifies or completes). */
    boolean chunkDone(long length, int lane) {
        if (lane < 64) {
            long bit = 1L << lane;
            long m = lanesMask;
            while ((m & bit) == 0 && !LANES_MASK.compareAndSet(this, m, m | bit)) {
                m = lanesMask;
            }
        }
        return (long) COMPLETED.getAndAdd(this, length) + length == total
                && STATE.compareAndSet(this, RUNNING, NOTIFYING);
    }

    void complete() {
        if ((int) STATE.getAndSet(this, DONE) == DONE) {
            return;
        }
        terminal = true;
        cancelDeadline();
        List<Integer> lanes = lanes(lanesMask);
        finished();
        if (batch != null) {
            // every byte completed, so no lane reads the batch again: free it before the caller hears of the end
            batch.release();
        }
        long took = System.nanoTime() - startNanos;
        TransferEvent.emit(this, lanes, null);
        metrics.completed(op, total, took);
        future.complete(new TransferResult(total, lanes, took, retries));
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
        if ((int) STATE.getAndSet(this, DONE) == DONE) {
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
    }

    private void cancelDeadline() {
        ScheduledFuture<?> d = deadlineTask;
        if (d != null) {
            d.cancel(false);
        }
    }

    void posted() {
        INFLIGHT.getAndAdd(this, 1);
    }

    void retired() {
        if ((int) INFLIGHT.getAndAdd(this, -1) == 1 && terminal) {
            maybeRelease();
        }
    }

    private void maybeRelease() {
        if (inflight == 0 && RELEASED.compareAndSet(this, 0, 1)) {
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
