package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.ffi.Libc;

/**
 * A dedicated thread that owns some lanes. It takes work from its queue ({@link #submit}: stripes of a transfer,
 * notification copies, or tasks to run here), keeps each lane's queue full up to its depth by posting chunks and
 * copies, posts the credit and verdict reads of the notification channels, and polls the lanes' completions, backing
 * off when idle ({@link ProgressIdle}). Every backend data call for an owned lane happens here, so backends need no
 * locking on the data path.
 *
 * <p>Work comes down from the {@link Dispatcher} and the {@link OutChannel}s; completions go to the dispatcher (chunks,
 * copies, verdict reads), to the channel (credit reads) and to {@link Inbound} (immediates from peers).
 */
final class ProgressThread implements Runnable {
    /** The most pieces of one vectored write the engine asks a backend for. */
    private static final int MAX_VECTOR = 16;

    /**
     * Longest park while peers are connected to this engine ({@code -Drdma4j.engine.inboundParkNanos}, default 50 us).
     */
    static final long INBOUND_PARK_CAP_NANOS = Long.getLong("rdma4j.engine.inboundParkNanos", 50_000);
    /**
     * The progress thread's timer slack ({@code -Drdma4j.engine.timerSlackNanos}, default 1 us; 0 leaves the inherited
     * one). Linux wakes a timed park up to the slack late, 50 us by default: a target that parks for a few microseconds
     * between polls (its peers' writes only advance while it polls, on the tcp provider) would otherwise sleep 50 us or
     * more each time, and the sender stalls on full socket buffers meanwhile.
     */
    static final long TIMER_SLACK_NANOS = Long.getLong("rdma4j.engine.timerSlackNanos", 1_000);

    private final Dispatcher dispatcher;
    private final Inbound inbound;
    private final ProgressErrors errors;
    private final EngineBackend backend;
    private final LaneRuntime[] lanes;
    private final Inbox inbox = new Inbox();
    private final Completions completions;
    private final ProgressIdle idle;

    private final long chunkBytes;
    /** The pieces of one vectored write of a batch's descriptors, rewritten by each (this thread's alone). */
    private final long[] vectorLocal = new long[MAX_VECTOR];

    private final long[] vectorRemote = new long[MAX_VECTOR];
    private final long[] vectorLength = new long[MAX_VECTOR];
    private final Thread thread;
    private final int index;
    private volatile boolean running = true;

    ProgressThread(
            Dispatcher dispatcher,
            Inbound inbound,
            ProgressErrors errors,
            EngineBackend backend,
            LaneRuntime[] lanes,
            IdleStrategy idle,
            long chunkBytes,
            int index,
            String name) {
        this.dispatcher = dispatcher;
        this.index = index;
        this.inbound = inbound;
        this.errors = errors;
        this.backend = backend;
        this.lanes = lanes;
        this.chunkBytes = chunkBytes;
        this.completions = new Completions(64);
        for (LaneRuntime l : lanes) {
            l.owner = this;
            l.vectorLimit = Math.clamp(backend.writeVectorLimit(l.lane), 1, MAX_VECTOR);
            l.vectorBytes = backend.writeVectorBytes(l.lane);
        }
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this);
        this.idle = new ProgressIdle(
                idle, ProgressIdle.kernelWait(backend, lanes, errors), thread, () -> !inbox.isEmpty(), this::quiet);
    }

    /** Whether this thread sleeps in the backend's kernel wait when idle (else it parks). */
    boolean waitsInKernel() {
        return idle.inKernel();
    }

    /** Frees what a thread that will never start holds (its kernel wait); the engine failed to open. */
    void discard() {
        idle.close();
    }

    void start() {
        thread.start();
    }

    /** Hands a {@link Stripe} or a {@link NotifyCopy} to this thread. */
    void submit(LaneWork work) {
        inbox.push(work);
        idle.wakeIfParked();
    }

    /** Runs {@code task} on this thread. */
    void submit(Runnable task) {
        submit(new Task(task));
    }

    /** A task to run on the progress thread, as an inbox item. */
    private static final class Task extends LaneWork {
        final Runnable task;

        Task(Runnable task) {
            this.task = task;
        }
    }

    boolean onThisThread() {
        return Thread.currentThread() == thread;
    }

    void stop() {
        running = false;
        idle.wake();
    }

    void join(long millis) throws InterruptedException {
        thread.join(millis);
    }

    @Override
    public void run() {
        if (TIMER_SLACK_NANOS > 0) {
            try {
                Libc.setTimerSlack(TIMER_SLACK_NANOS);
            } catch (RuntimeException | LinkageError e) {
                errors.record(e); // parks wake late, nothing worse
            }
        }
        try {
            while (running) {
                int work = 0;
                try {
                    work += drainInbox();
                    long now = System.nanoTime();
                    for (LaneRuntime l : lanes) {
                        work += pump(l, now);
                        work += poll(l);
                    }
                    inbound.polled(index, now);
                } catch (Throwable t) {
                    errors.record(t);
                }
                if (work > 0) {
                    idle.reset();
                } else if (inflight()) {
                    // completions are on their way: keep polling without yielding the core (a yield or park on a busy
                    // machine costs a scheduling quantum per completion batch)
                    Thread.onSpinWait();
                } else {
                    // with peers connected to us, their writes only advance while we poll (manual progress) and land
                    // without a completion here, so an idle-looking target must not sleep long
                    // (a kernel wait needs no cap: the peers' bytes wake it)
                    idle.idle(inbound.hasInbound() ? INBOUND_PARK_CAP_NANOS : Long.MAX_VALUE);
                }
            }
        } finally {
            idle.close();
        }
    }

    /**
     * {@return whether no lane has work queued, posted or waiting to be retried, and no departed peer awaits a poll}
     */
    private boolean quiet() {
        for (LaneRuntime l : lanes) {
            if (l.inflight() > 0 || !l.pending.isEmpty() || !l.notifyPending.isEmpty() || !l.creditRetry.isEmpty()) {
                return false;
            }
        }
        return !inbound.departing();
    }

    private boolean inflight() {
        for (LaneRuntime l : lanes) {
            if (l.inflight() > 0) {
                return true;
            }
        }
        return false;
    }

    private int drainInbox() {
        int n = 0;
        LaneWork w = inbox.takeAll();
        while (w != null) {
            LaneWork o = w;
            w = o.next;
            o.next = null; // taken: it may be handed over again from here on
            n++;
            if (o instanceof Stripe s) {
                lane(s.localLane).pending.add(s);
            } else if (o instanceof NotifyCopy c) {
                lane(c.lane).notifyPending.add(c);
            } else if (o instanceof Task t) {
                t.task.run();
            }
        }
        return n;
    }

    private LaneRuntime lane(int index) {
        for (LaneRuntime l : lanes) {
            if (l.lane == index) {
                return l;
            }
        }
        throw new IllegalStateException("lane " + index + " is not driven by this progress thread");
    }

    private int pump(LaneRuntime l, long now) {
        if (l.pending.isEmpty() && l.notifyPending.isEmpty() && l.creditRetry.isEmpty()) {
            return 0;
        }
        if (l.paused(now)) {
            // move the lane's queued work to healthy lanes instead of letting it wait out the cool-down
            int moved = 0;
            for (int i = l.pending.size(); i > 0; i--) {
                Stripe s = l.pending.poll();
                if (s.transfer.isTerminal()) {
                    continue;
                }
                if (l.failed || dispatcher.hasHealthyAlternative(s.transfer, l.lane)) {
                    dispatcher.retry(
                            s.transfer,
                            s.offset + s.cursor,
                            s.length - s.cursor,
                            s.attempt + 1,
                            l,
                            "paused after: " + l.lastError);
                    moved++;
                } else {
                    l.pending.add(s);
                }
            }
            for (int i = l.notifyPending.size(); i > 0; i--) {
                NotifyCopy c = l.notifyPending.poll();
                if (c.abandoned()) {
                    continue;
                }
                // a copy stays on its lane while the lane only cools down: it must travel behind the data that lane
                // carried (a completed write is sent, not yet placed), and another lane could overtake that data; only
                // a lane out of service for good gives its copies away
                if (l.failed) {
                    dispatcher.retryNotification(c, l, "paused after: " + l.lastError);
                    moved++;
                } else {
                    l.notifyPending.add(c);
                }
            }
            return moved;
        }
        if (l.lastError != null && l.failures > 0 && backend.laneError(l.lane) != null) {
            // cool-down over and the backend still reports the lane broken: try to bring it back once
            if (!backend.recover(l.lane)) {
                l.failed = true;
                return 0;
            }
        }
        int posted = 0;
        for (int i = l.creditRetry.size(); i > 0; i--) {
            l.creditRetry.poll().retryCredit(l);
        }
        while (!l.notifyPending.isEmpty()) {
            NotifyCopy c = l.notifyPending.peek();
            if (c.abandoned()) {
                l.notifyPending.poll();
                continue;
            }
            int rc = postNotify(l, c);
            if (rc == EngineBackend.OK) {
                l.notifyPending.poll();
                posted++;
            } else if (rc == EngineBackend.BACK_PRESSURED) {
                break;
            } else {
                l.notifyPending.poll();
                String err = backend.laneError(l.lane);
                err = l.describe() + ": notification post failed: " + (err == null ? "status " + rc : err);
                dispatcher.laneFailed(l, err);
                c.transfer.recordError(err);
                dispatcher.retryNotification(c, l, err);
                break;
            }
        }
        while (!l.pending.isEmpty()) {
            Stripe s = l.pending.peek();
            TransferImpl t = s.transfer;
            if (t.isTerminal()) {
                l.pending.poll();
                continue;
            }
            int slot = l.takeSlot();
            if (slot < 0) {
                break;
            }
            long off = s.offset + s.cursor;
            long len = Math.min(chunkBytes, s.length - s.cursor);
            t.posted();
            if (t.isTerminal()) {
                t.retired();
                l.giveSlot(slot);
                l.pending.poll();
                continue;
            }
            long la = t.localAddress + off;
            long ra = t.remoteAddress(s.remoteLane) + off;
            BatchImpl b = t.batch;
            int d = -1;
            if (b != null) {
                // byte off of a batch lies in one descriptor; a chunk ends where that descriptor does
                d = b.descriptorAt(off);
                long into = off - b.start[d];
                len = Math.min(len, b.length[d] - into);
                la = t.localAddress + b.sourceOffset[d] + into;
                ra = t.remoteAddress(s.remoteLane) + b.targetOffset[d] + into;
            }
            long rk = t.remoteKey[s.remoteLane];
            int pieces = b != null && t.op == Op.WRITE ? gather(l, s, b, d, la, ra, len) : 1;
            if (pieces > 1) {
                len = 0;
                for (int i = 0; i < pieces; i++) {
                    len += vectorLength[i];
                }
            }
            int rc = t.op == Op.READ
                    ? backend.postRead(l.lane, s.connection, t.localHandle, la, len, ra, rk, slot)
                    : pieces > 1
                            ? backend.postWriteVector(
                                    l.lane,
                                    s.connection,
                                    t.localHandle,
                                    vectorLocal,
                                    vectorRemote,
                                    vectorLength,
                                    pieces,
                                    rk,
                                    slot)
                            : backend.postWrite(l.lane, s.connection, t.localHandle, la, len, ra, rk, slot);
            if (rc == EngineBackend.OK) {
                l.slotOwner[slot] = t;
                l.slotKind[slot] = t.op;
                l.slotOffset[slot] = off;
                l.slotLength[slot] = len;
                l.slotAttempt[slot] = s.attempt;
                l.slotRemoteLane[slot] = s.remoteLane;
                l.slotConnection[slot] = s.connection;
                s.cursor += len;
                if (s.cursor == s.length) {
                    l.pending.poll();
                }
                posted++;
            } else {
                t.retired();
                l.giveSlot(slot);
                if (rc != EngineBackend.BACK_PRESSURED) {
                    String err = backend.laneError(l.lane);
                    dispatcher.laneFailed(l, err == null ? "post failed with status " + rc : err);
                }
                break;
            }
        }
        return posted;
    }

    /**
     * Gathers the chunk of batch descriptor {@code d} that starts at {@code la}/{@code ra} ({@code len} bytes, to the
     * end of its descriptor) and the whole descriptors after it into {@link #vectorLocal}, {@link #vectorRemote} and
     * {@link #vectorLength}, while they fit the lane's vector limits (pieces and bytes), the chunk size and what is
     * left of the stripe: scattered blocks of a batch then go out as one vectored write (one operation and one
     * completion for several blocks).
     *
     * @return the pieces gathered; 1 when the chunk goes alone
     */
    private int gather(LaneRuntime l, Stripe s, BatchImpl b, int d, long la, long ra, long len) {
        int limit = l.vectorLimit;
        if (limit < 2 || s.offset + s.cursor + len != b.start[d + 1]) {
            return 1;
        }
        TransferImpl t = s.transfer;
        long room = Math.min(Math.min(chunkBytes, l.vectorBytes), s.length - s.cursor) - len;
        vectorLocal[0] = la;
        vectorRemote[0] = ra;
        vectorLength[0] = len;
        int n = 1;
        while (n < limit && d + n < b.count && b.length[d + n] <= room) {
            int next = d + n;
            vectorLocal[n] = t.localAddress + b.sourceOffset[next];
            vectorRemote[n] = t.remoteAddress(s.remoteLane) + b.targetOffset[next];
            vectorLength[n] = b.length[next];
            room -= b.length[next];
            n++;
        }
        return n;
    }

    /** Posts notification copy {@code c} on owned lane {@code l}; returns the backend status. */
    private int postNotify(LaneRuntime l, NotifyCopy c) {
        int slot = l.takeSlot();
        if (slot < 0) {
            return EngineBackend.BACK_PRESSURED;
        }
        TransferImpl t = c.transfer;
        OutChannel ch = t.peer.channel;
        int s = ch.slotOf(t);
        long at = (long) s * NotificationRecord.SLOT_BYTES;
        long length = NotificationRecord.SLOT_BYTES;
        t.posted();
        int rc = backend.postWriteImmediate(
                l.lane,
                c.connection,
                ch.handle(),
                ch.localAddress(at),
                length,
                ch.remoteAddress(c.remoteLane, at),
                ch.remoteKey[c.remoteLane],
                ch.immediate(s, c.markLane),
                slot);
        if (rc == EngineBackend.OK) {
            l.slotOwner[slot] = c;
            l.slotKind[slot] = Op.NOTIFY;
            l.slotRemoteLane[slot] = c.remoteLane;
            l.slotConnection[slot] = c.connection;
            l.slotLength[slot] = length;
        } else {
            t.retired();
            l.giveSlot(slot);
        }
        return rc;
    }

    /** Posts a read of a peer's consumed-notifications counter. */
    int postCreditRead(
            LaneRuntime l,
            OutChannel ch,
            int remoteLane,
            int connection,
            int localHandle,
            long localAddress,
            long remoteAddress,
            long remoteKey) {
        int slot = l.takeSlot();
        if (slot < 0) {
            return EngineBackend.BACK_PRESSURED;
        }
        int rc = backend.postRead(l.lane, connection, localHandle, localAddress, 8, remoteAddress, remoteKey, slot);
        if (rc == EngineBackend.OK) {
            l.slotOwner[slot] = ch;
            l.slotKind[slot] = Op.CREDIT_READ;
            l.slotRemoteLane[slot] = remoteLane;
            l.slotConnection[slot] = connection;
        } else {
            l.giveSlot(slot);
        }
        return rc;
    }

    /** Posts a read of the peer's CRC32C verdict word for {@code t} on owned lane {@code l}; returns the status. */
    int postVerdictRead(LaneRuntime l, TransferImpl t) {
        int slot = l.takeSlot();
        if (slot < 0) {
            return EngineBackend.BACK_PRESSURED;
        }
        OutChannel ch = t.peer.channel;
        int remoteLane = t.peer.remoteLane[l.lane];
        int connection = t.peer.connection[l.lane];
        long at = NotificationRecord.verdictOffset(ch.slots, ch.slotOf(t));
        int rc = backend.postRead(
                l.lane,
                connection,
                ch.handle(),
                ch.localAddress(at),
                NotificationRecord.VERDICT_BYTES,
                ch.remoteAddress(remoteLane, at),
                ch.remoteKey[remoteLane],
                slot);
        if (rc == EngineBackend.OK) {
            l.slotOwner[slot] = t;
            l.slotKind[slot] = Op.VERDICT_READ;
            l.slotRemoteLane[slot] = remoteLane;
            l.slotConnection[slot] = connection;
        } else {
            l.giveSlot(slot);
        }
        return rc;
    }

    private int poll(LaneRuntime l) {
        // always poll: with manual progress the peer's incoming writes on this lane only advance when we do
        Completions c = completions;
        int n = backend.poll(l.lane, c);
        for (int i = 0; i < n; i++) {
            if (c.kind[i] == Completions.REMOTE_IMMEDIATE) {
                if (c.status[i] == 0) {
                    inbound.onImmediate(c.immediate[i]);
                }
                continue;
            }
            int slot = (int) c.context[i];
            if (slot < 0 || slot >= l.depth || l.slotOwner[slot] == null) {
                errors.record(
                        new IllegalStateException(l.describe() + ": completion for unknown context " + c.context[i]));
                continue;
            }
            Object owner = l.slotOwner[slot];
            byte kind = l.slotKind[slot];
            long off = l.slotOffset[slot];
            long len = l.slotLength[slot];
            int attempt = l.slotAttempt[slot];
            int remoteLane = l.slotRemoteLane[slot];
            int connection = l.slotConnection[slot];
            l.giveSlot(slot);
            boolean ok = c.status[i] == 0;
            String err = ok
                    ? null
                    : l.describe() + ": " + (c.errorText[i] == null ? "error " + c.status[i] : c.errorText[i]);
            if (ok) {
                l.failures = 0;
            } else {
                dispatcher.laneFailed(l, err);
            }
            switch (kind) {
                case Op.WRITE, Op.READ -> {
                    TransferImpl t = (TransferImpl) owner;
                    if (ok) {
                        l.bytesCompleted.addAndGet(len);
                        l.chunksCompleted.incrementAndGet();
                        if (!t.isTerminal() && t.chunkDone(len, l.lane)) {
                            dispatcher.dataDone(t, l, remoteLane, connection);
                        }
                    } else if (!t.isTerminal()) {
                        t.recordError(err);
                        dispatcher.retry(t, off, len, attempt + 1, l, err);
                    }
                    t.retired();
                }
                case Op.NOTIFY -> {
                    NotifyCopy nc = (NotifyCopy) owner;
                    TransferImpl t = nc.transfer;
                    if (ok) {
                        if (t.copyDone()) {
                            dispatcher.notified(t, l);
                        }
                    } else if (!nc.abandoned()) {
                        t.recordError(err);
                        dispatcher.retryNotification(nc, l, err);
                    }
                    t.retired();
                }
                case Op.CREDIT_READ -> ((OutChannel) owner).creditRead(l, ok, remoteLane, connection);
                case Op.VERDICT_READ -> dispatcher.verdictRead((TransferImpl) owner, l, ok, err);
                default -> errors.record(new IllegalStateException("slot kind " + kind));
            }
        }
        return n;
    }
}
