package io.rdma4j.engine.internal;

import io.rdma4j.engine.ChecksumMismatchException;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferTimeoutException;
import io.rdma4j.engine.spi.EngineBackend;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

/**
 * Launches transfers onto the lanes' progress threads and carries them to the end: retry and failover of chunks and
 * notification copies onto other lanes, the notification once the data is in, and the read of the target's CRC32C
 * verdict. The progress threads report completions here; the dispatcher sends work down to them, to the
 * {@link OutChannel} of the peer and so to the backend, never back up.
 */
final class Dispatcher {
    /** Longest pause between two reads of a CRC32C verdict that is not there yet. */
    private static final long VERDICT_POLL_MAX_NANOS = 1_000_000;

    private final String name;
    private final EngineBackend backend;
    private final LaneRuntime[] lanes;
    private final RegistrationCache registrations;
    private final EngineMetrics metrics;
    private final ScheduledExecutorService timer;
    private final BooleanSupplier closing;
    private final int maxRetries;
    private final long cooldownNanos;
    private final long maxCooldownNanos;
    private final ActiveTransfers active;

    Dispatcher(
            String name,
            EngineBackend backend,
            LaneRuntime[] lanes,
            RegistrationCache registrations,
            EngineMetrics metrics,
            ScheduledExecutorService timer,
            EngineConfig config,
            ActiveTransfers active,
            BooleanSupplier closing) {
        this.name = name;
        this.active = active;
        this.backend = backend;
        this.lanes = lanes;
        this.registrations = registrations;
        this.metrics = metrics;
        this.timer = timer;
        this.closing = closing;
        this.maxRetries = config.maxRetries();
        this.cooldownNanos = config.cooldown().toNanos();
        this.maxCooldownNanos = config.maxCooldown().toNanos();
    }

    /** {@return transfers not yet finished} */
    int activeTransfers() {
        return active.size();
    }

    /** Fails every transfer in flight (the engine closes). */
    void failAll() {
        for (TransferImpl t : active.snapshot(null)) {
            t.fail(new TransferException("engine " + name + " closed with the transfer in flight (" + t.bytesCompleted()
                    + " of " + t.total + " bytes done)"));
        }
    }

    /** Starts a checked transfer: its stripes go to the progress threads of their lanes. */
    Transfer launch(TransferImpl t) {
        if (t.crc) {
            CRC32C c = new CRC32C();
            c.update(t.local.segment.asSlice(t.localOffset, t.total).asByteBuffer());
            t.crcValue = (int) c.getValue();
        }
        t.startNanos = System.nanoTime(); // the result's time runs from here, as before the preparer made the transfer
        PeerLink link = t.peer;
        active.add(t);
        if (closing.getAsBoolean()) {
            t.fail(new TransferException("engine " + name + " closed"));
            return t;
        }
        if (link.lost()) {
            t.fail(new PeerLostException("peer '" + link.name + "' is gone: " + link.lostReason));
            return t;
        }
        Duration d = t.options.deadline();
        if (d != null) {
            String what = (t.op == Op.READ ? "read" : "write") + " of " + t.total + " bytes with " + link.name;
            t.deadlineTask = timer.schedule(
                    () -> t.fail(new TransferTimeoutException(what + " missed its "
                            + d.toMillis() + " ms deadline with " + t.bytesCompleted() + " bytes done"
                            + (t.awaitingVerdict ? ", waiting for the target's CRC32C verdict" : ""))),
                    d.toNanos(),
                    TimeUnit.NANOSECONDS);
        }
        Planner.Assignment a = t.assignment;
        if (a == null) {
            // one lane pair carries it whole: the transfer is its own stripe
            LaneRuntime l = lanes[t.localLane];
            if (t.total > 0) {
                l.owner.submit(t);
            } else if (t.notify) {
                t.notifying();
                l.owner.submit(() -> dataDone(t, l, t.remoteLane, t.connection));
            } else {
                t.complete();
            }
            return t;
        }
        for (int i = 0; i < a.size(); i++) {
            Planner.Candidate c = a.pairs()[i];
            lanes[c.localLane()].owner.submit(new Stripe(
                    t, c.localLane(), c.remoteLane(), link.connection[c.localLane()], a.start()[i], a.length()[i], 0));
        }
        return t;
    }

    void laneFailed(LaneRuntime l, String error) {
        l.fail(error, cooldownNanos, maxCooldownNanos, backend);
    }

    void dataDone(TransferImpl t, LaneRuntime l, int remoteLane, int connection) {
        if (!t.notify) {
            t.complete();
            return;
        }
        t.peer.channel.notify(t, l, remoteLane, connection);
    }

    /**
     * Every notification copy of {@code t} completed (on lane {@code l}'s thread): a write without a CRC is done, one
     * with a CRC reads the target's verdict first.
     */
    void notified(TransferImpl t, LaneRuntime l) {
        if (!t.crc) {
            t.complete();
            return;
        }
        t.awaitingVerdict = true;
        pollVerdict(t, l);
    }

    /** Posts a read of {@code t}'s verdict word on {@code l} (on its thread), unless {@code t} ended meanwhile. */
    private void pollVerdict(TransferImpl t, LaneRuntime l) {
        OutChannel ch = t.peer.channel;
        if (t.peer.lost()) {
            t.fail(new PeerLostException("write of " + t.total + " bytes with '" + t.peer.name
                    + "' failed: the peer is gone (" + t.peer.lostReason + ") before its CRC32C verdict was read"));
        }
        if (t.isTerminal()) {
            ch.verdictDone(t, l);
            return;
        }
        int rc = l.owner.postVerdictRead(l, t);
        if (rc == EngineBackend.BACK_PRESSURED) {
            pollVerdictLater(t, l);
        } else if (rc != EngineBackend.OK) {
            String err = backend.laneError(l.lane);
            err = l.describe() + ": CRC32C verdict read post failed: " + (err == null ? "status " + rc : err);
            laneFailed(l, err);
            verdictReadFailed(t, l, err);
        }
    }

    /** A read of {@code t}'s verdict word completed on {@code l} ({@code err} when it failed). */
    void verdictRead(TransferImpl t, LaneRuntime l, boolean ok, String err) {
        OutChannel ch = t.peer.channel;
        if (t.isTerminal()) {
            ch.verdictDone(t, l);
            return;
        }
        if (!ok) {
            verdictReadFailed(t, l, err);
            return;
        }
        long word = ch.verdictWord(t);
        int code = NotificationRecord.verdictCode(word);
        // the peer's word is untrusted: only a word written for our sequence with a verdict decides; the previous
        // write's word in the slot (or anything else) means the check is not done yet
        if (!NotificationRecord.verdictFor(word, t.notifySeq) || code == NotificationRecord.VERDICT_NONE) {
            pollVerdictLater(t, l);
            return;
        }
        ch.verdictDone(t, l);
        if (code == NotificationRecord.VERDICT_VERIFIED) {
            t.complete();
        } else {
            long landed = code == NotificationRecord.VERDICT_MISMATCH
                    ? Integer.toUnsignedLong(NotificationRecord.verdictCrc(word))
                    : -1;
            t.fail(new ChecksumMismatchException(
                    t.peer.name,
                    t.tag,
                    t.targetName,
                    t.targetOffset,
                    t.total,
                    Integer.toUnsignedLong(t.crcValue),
                    landed));
        }
    }

    private void verdictReadFailed(TransferImpl t, LaneRuntime l, String err) {
        t.recordError(err);
        t.retried();
        metrics.retried(EngineMetrics.RETRY_VERDICT);
        Planner.Candidate c = ++t.verdictFailures > maxRetries ? null : pickLane(t, l.lane, t.verdictFailures);
        if (c == null) {
            t.fail(t.laneFailure(
                    "reading the CRC32C verdict of notification " + t.tag + " after a " + t.total + "-byte write"));
            t.peer.channel.verdictDone(t, l);
            return;
        }
        pollVerdictLater(t, lanes[c.localLane()]);
    }

    /**
     * Reads the verdict again after a pause: the target checks a large range on a virtual thread, so the verdict may
     * take milliseconds; the pause doubles from 10 us up to {@link #VERDICT_POLL_MAX_NANOS}.
     */
    private void pollVerdictLater(TransferImpl t, LaneRuntime l) {
        long pause = Math.min(VERDICT_POLL_MAX_NANOS, 10_000L << Math.min(t.verdictPolls++, 8));
        try {
            timer.schedule(() -> l.owner.submit(() -> pollVerdict(t, l)), pause, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing: close() fails every transfer in flight
            t.peer.channel.verdictDone(t, l);
        }
    }

    /** Re-routes [offset, offset+length) of {@code t} after a failure on {@code failed}. */
    void retry(TransferImpl t, long offset, long length, int attempt, LaneRuntime failed, String error) {
        if (t.isTerminal()) {
            return;
        }
        if (t.peer.lost()) {
            t.fail(new PeerLostException(
                    "transfer with '" + t.peer.name + "' failed: the peer is gone (" + t.peer.lostReason + ")"));
            return;
        }
        if (attempt > maxRetries) {
            t.fail(t.laneFailure((t.op == Op.READ ? "read" : "write") + " of " + t.total + " bytes (a chunk failed "
                    + attempt + " times)"));
            return;
        }
        Planner.Candidate c = pickLane(t, failed.lane, attempt);
        ChunkRetryEvent.emit(t, offset, length, attempt, failed.lane, c == null ? -1 : c.localLane(), error);
        if (c == null) {
            t.fail(t.laneFailure((t.op == Op.READ ? "read" : "write") + " of " + t.total + " bytes"));
            return;
        }
        t.retried();
        metrics.retried(EngineMetrics.RETRY_CHUNK);
        lanes[c.localLane()].owner.submit(new Stripe(
                t, c.localLane(), c.remoteLane(), t.peer.connection[c.localLane()], offset, length, attempt));
    }

    /**
     * A healthy lane other than {@code avoid}; else one cooling down (it waits); null when every lane is out of
     * service.
     */
    private Planner.Candidate pickLane(TransferImpl t, int avoid, int attempt) {
        long now = System.nanoTime();
        int n = t.pairs.length;
        for (int k = 0; k < n; k++) {
            Planner.Candidate c = t.pairs[(k + attempt) % n];
            if (c.localLane() != avoid && !lanes[c.localLane()].paused(now)) {
                return c;
            }
        }
        Planner.Candidate soonest = null;
        for (Planner.Candidate c : t.pairs) {
            LaneRuntime l = lanes[c.localLane()];
            if (!l.failed
                    && (soonest == null || l.pausedUntilNanos - lanes[soonest.localLane()].pausedUntilNanos < 0)) {
                soonest = c;
            }
        }
        return soonest;
    }

    /** Whether a stripe waiting on paused lane {@code l} has somewhere better to go now. */
    boolean hasHealthyAlternative(TransferImpl t, int lane) {
        long now = System.nanoTime();
        for (Planner.Candidate c : t.pairs) {
            if (c.localLane() != lane && !lanes[c.localLane()].paused(now)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A notification copy failed on {@code failed}: send it on another lane (it still vouches for its original lane).
     */
    void retryNotification(NotifyCopy copy, LaneRuntime failed, String error) {
        TransferImpl t = copy.transfer;
        if (copy.abandoned()) {
            return;
        }
        copy.attempts++;
        t.retried();
        metrics.retried(EngineMetrics.RETRY_NOTIFICATION);
        if (copy.attempts > maxRetries) {
            t.fail(t.laneFailure("notification " + t.tag + " after a " + t.total + "-byte write"));
            return;
        }
        Planner.Candidate c = pickLane(t, failed.lane, copy.attempts);
        if (c == null) {
            t.fail(t.laneFailure("notification " + t.tag + " after a " + t.total + "-byte write"));
            return;
        }
        copy.lane = c.localLane();
        copy.remoteLane = c.remoteLane();
        copy.connection = t.peer.connection[c.localLane()];
        lanes[c.localLane()].owner.submit(copy);
    }
}
