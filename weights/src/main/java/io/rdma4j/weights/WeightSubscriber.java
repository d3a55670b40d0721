package io.rdma4j.weights;

import io.rdma4j.Closeables;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.HostMemory;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.weights.internal.ControlWrites;
import io.rdma4j.weights.internal.ManifestReader;
import io.rdma4j.weights.internal.Member;
import io.rdma4j.weights.internal.PublisherRank;
import io.rdma4j.weights.internal.PublisherWatch;
import io.rdma4j.weights.internal.Relayer;
import io.rdma4j.weights.internal.Tags;
import io.rdma4j.weights.internal.TensorMeta;
import io.rdma4j.weights.internal.Wire;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

// One unit, over 600 lines: the counting thread, the buffers handed to publishers and the leases are one state machine
// under one lock (a buffer is free to a publisher only while no lease holds it and it is not the newest complete
// version). Its builder, plan text and manifest checks already live apart; splitting the rest would spread that lock's
// invariants over classes.
/**
 * One rollout rank's side of weight sync. It reads the manifests of the trainer ranks it subscribes to, reserves one
 * buffer (two with double buffering) holding the part of each tensor it needs, and joins. Its own thread counts the
 * pieces landing for each version, forwards the pieces its plan relays, and confirms a version once every byte of it
 * landed: {@link #awaitVersion} then hands out a {@link Lease} on it, and no byte of another version lands in that
 * buffer while a lease is open. Every notification names its version and its publisher's epoch; pieces of another
 * version or epoch, or for a buffer not handed to the publisher, are not counted.
 *
 * <p>One unit (about 650 lines): the notification handling, the version slots and the leases all read and change the
 * same per-slot state under one lock; what stands alone is in {@code internal} already ({@code PublisherRank},
 * {@code PublisherWatch}, {@code ControlWrites}, {@code Relayer}, {@code Wire}).
 */
public final class WeightSubscriber implements AutoCloseable {
    static final String WANT = "w.want";
    static final String INBOX = "w.inbox";
    static final String SLOT = "w.slot";

    private final TransferEngine engine;
    private final List<String> publishers;
    private final Arena arena = Arena.ofShared();
    private final List<TensorMeta> metas;
    /** The lowest trainer rank's tensor-set metadata (safetensors' {@code __metadata__}). */
    private final Map<String, String> metadata;

    private final List<Shard> needs = new ArrayList<>();
    private final long[] offsets;
    private final int slots;
    private final long slotBytes;
    /** Bytes of one version this subscriber needs: its parts of every tensor. */
    private final long neededBytes;
    /**
     * The version being assembled, or last completed, and its bytes landed so far: written by the subscriber thread.
     */
    private volatile long progressVersion = -1;

    private volatile long progressBytes;
    private final LocalBuffer[] slotBuffers;
    private final LocalBuffer inbox;
    private final LocalBuffer want;
    private final LocalBuffer ctl;
    /** This process's number in its joins: a publisher tells a restarted subscriber from a repeated join by it. */
    private final int incarnation = ThreadLocalRandom.current().nextInt(1, (int) Tags.MAX_VERSION + 1);

    private final Thread thread;
    private final Relayer relayer;
    private final PublisherWatch watch;
    private volatile boolean closed;
    private final ControlWrites controls;

    // owned by the subscriber thread
    private final PublisherRank[] ranks;
    private final long[] assembling;

    // shared with callers, under lock
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition landed = lock.newCondition();
    private final long[] complete;
    private final int[] leases;
    private final boolean[] given;
    private final boolean[] consumed;
    private int latestSlot = -1;
    private long stale;
    private long mismatches;
    private int seq;

    WeightSubscriber(WeightSubscriberBuilder b) {
        this.engine = b.engine;
        this.publishers = List.copyOf(b.publishers);
        this.slots = b.doubleBuffer ? 2 : 1;
        this.complete = new long[slots];
        this.leases = new int[slots];
        this.given = new boolean[slots];
        this.consumed = new boolean[slots];
        this.assembling = new long[slots];
        java.util.Arrays.fill(complete, -1);
        java.util.Arrays.fill(assembling, -1);
        // each rank's process generation when joined: the watch's baseline for restarts
        long[] generations = new long[Tags.MAX_RANKS];
        try {
            List<Wire.Manifest> manifests = new ArrayList<>();
            for (String p : publishers) {
                manifests.add(ManifestReader.read(engine, arena, p, WeightPublisher.MANIFEST, b.joinTimeout));
            }
            this.metas = ManifestChecks.agreed(manifests);
            this.metadata = manifests.stream()
                    .min(java.util.Comparator.comparingInt(Wire.Manifest::rank))
                    .orElseThrow()
                    .metadata();
            this.ranks = new PublisherRank[Tags.MAX_RANKS];
            for (int i = 0; i < publishers.size(); i++) {
                Wire.Manifest m = manifests.get(i);
                if (ranks[m.rank()] != null) {
                    throw new InvalidArgumentException(publishers.get(i) + " and " + ranks[m.rank()].engineName
                            + " both say they are rank " + m.rank() + ": give each trainer rank its own number");
                }
                ranks[m.rank()] = new PublisherRank(publishers.get(i), slots);
                ranks[m.rank()].epoch = m.epoch();
                generations[m.rank()] = engine.peer(publishers.get(i)).generation();
            }
            offsets = new long[metas.size()];
            long at = 0;
            long needed = 0;
            for (int t = 0; t < metas.size(); t++) {
                TensorMeta tm = metas.get(t);
                Shard need = b.needs.apply(tm.name());
                needs.add(need);
                if (need != null) {
                    need.box(tm.shape());
                    offsets[t] = at;
                    at += (tm.bytes(need) + 63) & ~63L;
                    needed += tm.bytes(need);
                }
            }
            ManifestChecks.requireCoverage(manifests, metas, needs);
            slotBytes = Math.max(at, 64);
            neededBytes = needed;
            slotBuffers = new LocalBuffer[slots];
            for (int s = 0; s < slots; s++) {
                slotBuffers[s] = engine.register(HostMemory.allocate(arena, slotBytes));
                engine.publish(SLOT + s, slotBuffers[s], Access.anyPeer());
            }
            inbox = engine.register(arena.allocate((long) Tags.MAX_RANKS * WeightPublisher.INBOX_PER_RANK, 4096));
            engine.publish(INBOX, inbox, Access.anyPeer());
            byte[] w = Wire.want(new Member(engine.name(), slots, slotBytes, needs, offsets));
            MemorySegment ws = arena.allocate(Math.max(4096, w.length), 4096);
            MemorySegment.copy(MemorySegment.ofArray(w), 0, ws, 0, w.length);
            want = engine.register(ws);
            engine.publish(WANT, want, Access.anyPeer());
            ctl = engine.register(arena.allocate(4096, 4096));
            controls = new ControlWrites(engine, ctl, WeightPublisher.CONTROL);
            relayer = new Relayer(engine, slotBuffers, SLOT);
            for (PublisherRank r : ranks) {
                if (r != null) {
                    join(r);
                }
            }
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, this::closeResources);
        }
        String[] names = new String[ranks.length];
        for (int r = 0; r < ranks.length; r++) {
            if (ranks[r] != null) {
                names[r] = ranks[r].engineName;
            }
        }
        watch = new PublisherWatch(engine, WeightPublisher.MANIFEST, names, generations, Duration.ofMillis(500));
        thread = Thread.ofPlatform()
                .daemon()
                .name("weights-subscriber-" + engine.name())
                .start(this::loop);
    }

    /**
     * {@return a builder}
     *
     * @param engine this rank's engine
     * @param publishers the engine names of the trainer ranks to subscribe to
     */
    public static WeightSubscriberBuilder builder(TransferEngine engine, List<String> publishers) {
        return new WeightSubscriberBuilder(engine, publishers);
    }

    private void join(PublisherRank r) {
        sendControl(r, Tags.JOIN, incarnation);
    }

    /** Tells a publisher rank something: join, a version complete, or a buffer freed, with the free-buffer mask. */
    private void sendControl(PublisherRank r, int kind, long version) {
        int mask;
        int newest;
        int n;
        // the number goes with the state it was taken with: read outside the lock, another thread's newer number could
        // ride on this older state, and the publisher would keep that state and drop the newer one
        lock.lock();
        try {
            mask = freeMask();
            newest = slots > 1 ? latestSlot : -1;
            seq = (seq + 1) & 0xfffff;
            n = seq;
        } finally {
            lock.unlock();
        }
        controls.send(r.engineName, Tags.control(kind, r.epoch, n, mask, Math.max(0, version), newest));
    }

    /** Under lock: the buffers the publisher may write, each then given to it (no lease until it completes again). */
    private int freeMask() {
        int mask = 0;
        for (int s = 0; s < slots; s++) {
            boolean free = leases[s] == 0 && (slots == 1 ? (complete[s] < 0 || consumed[s]) : s != latestSlot);
            if (free || given[s]) {
                mask |= 1 << s;
                given[s] = true;
            }
        }
        return mask;
    }

    private void loop() {
        while (!closed) {
            try {
                Notification n = engine.notifications().poll(Duration.ofMillis(50));
                if (n != null) {
                    handle(n);
                }
                for (PublisherWatch.Restart x; (x = watch.poll()) != null; ) {
                    restarted(x);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                // a malformed plan or a vanished peer: what it concerned is not counted; keep serving
            }
        }
    }

    /** A restarted publisher rank (new generation) has new keys and a new epoch: join it. */
    private void restarted(PublisherWatch.Restart x) {
        PublisherRank r = ranks[x.rank()];
        r.epoch = x.epoch();
        r.dropped = -1;
        r.plan = null;
        r.reconfirmed = -1;
        r.targets.clear();
        dropEarly(r);
        controls.forget(r.engineName);
        join(r);
    }

    private void handle(Notification n) {
        long tag = n.tag();
        int kind = Tags.kind(tag);
        if (kind != Tags.DATA && kind != Tags.PLAN && kind != Tags.DROP) {
            return;
        }
        PublisherRank r = ranks[Tags.rank(tag)];
        if (r == null || Tags.epoch(tag) != r.epoch) {
            countStale();
            return;
        }
        if (kind == Tags.DROP) {
            // this rank gave up on us for a version (we were slow, paused, or a piece failed its check), or could not
            // admit our join: what lands under the old plan no longer counts, and joining again gets the next version.
            // The rank sends the notice again until it admits us; once its new plan came, a repeat of it is stale, and
            // so is any notice sent before that plan was made (a refused join's, overtaken by the next join's plan)
            if (r.plan != null && Tags.noticeBefore(Tags.piece(tag), r.plan.notices())) {
                countStale();
                return;
            }
            if (Tags.piece(tag) != r.dropped || r.plan == null) {
                r.dropped = Tags.piece(tag);
                r.plan = null;
                r.targets.clear();
                dropEarly(r);
                join(r);
            }
            return;
        }
        if (kind == Tags.PLAN) {
            MemorySegment region = inbox.segment()
                    .asSlice((long) Tags.rank(tag) * WeightPublisher.INBOX_PER_RANK, WeightPublisher.INBOX_PER_RANK);
            Wire.PlanMessage p = Wire.plan(region, r.engineName, slotBytes);
            if (p.plan() != Tags.plan(tag) || p.epoch() != r.epoch) {
                countStale();
                return;
            }
            r.plan = p;
            for (int s = 0; s < slots; s++) {
                r.arrived[s].clear();
                r.count[s] = 0;
            }
            // its data that overtook it counts now; another plan's is stale
            for (Notification e; (e = r.takeEarly()) != null; ) {
                if (Tags.plan(e.tag()) == p.plan()) {
                    data(r, e);
                } else {
                    countStale();
                }
            }
            // a rank with nothing for this subscriber sends no data after its plan: when the other ranks' pieces of
            // the version under way all landed before this plan, its arrival is what completes that version
            for (int s = 0; s < slots; s++) {
                completeIfWhole(s);
            }
            return;
        }
        Wire.PlanMessage p = r.plan;
        if (p == null || p.plan() != Tags.plan(tag)) {
            // its plan may still be on its way on another lane; or it is an old plan's, counted stale when the next
            // plan comes
            if (!r.keepEarly(n)) {
                countStale();
            }
            return;
        }
        data(r, n);
    }

    private void dropEarly(PublisherRank r) {
        int n = r.dropEarly();
        if (n > 0) {
            lock.lock();
            try {
                stale += n;
            } finally {
                lock.unlock();
            }
        }
    }

    /** A piece of rank {@code r}'s current plan landed: count it, forward it, and complete the version if whole. */
    private void data(PublisherRank r, Notification n) {
        long tag = n.tag();
        Wire.PlanMessage p = r.plan;
        long version = Tags.version(tag);
        int piece = Tags.piece(tag);
        int slot = (int) (version % slots);
        if (piece >= p.pieces().size()) {
            countStale();
            return;
        }
        Wire.InPiece in = p.pieces().get(piece);
        long lastDst = in.dst() + (in.count() - 1) * in.stride();
        if (!(SLOT + slot).equals(n.buffer()) || n.offset() != lastDst || n.length() != in.length()) {
            countStale();
            return;
        }
        boolean old;
        boolean again = false;
        lock.lock();
        try {
            old = !given[slot] || version < assembling[slot] || version <= complete[slot];
            if (old) {
                stale++;
                // a piece of the version this buffer completed, under a later plan: the rank resent it, as it does
                // when our confirmation did not reach it (its repair round); confirm once more, once per plan
                again = version == complete[slot] && r.reconfirmed != p.plan();
            } else if (n.checksum() == Notification.Checksum.MISMATCH) {
                mismatches++;
                return;
            }
        } finally {
            lock.unlock();
        }
        if (old) {
            if (again) {
                r.reconfirmed = p.plan();
                sendControl(r, Tags.DONE, version);
            }
            return;
        }
        if (version > assembling[slot]) {
            assembling[slot] = version;
            for (PublisherRank x : ranks) {
                if (x != null) {
                    x.arrived[slot].clear();
                    x.count[slot] = 0;
                }
            }
        }
        if (!r.arrived[slot].get(piece)) {
            r.arrived[slot].set(piece);
            r.count[slot]++;
            if (version > progressVersion) {
                progressVersion = version;
                progressBytes = 0;
            }
            if (version == progressVersion) {
                // a piece resent in a repair round lands twice: the sample never passes one version's bytes
                progressBytes = Math.min(neededBytes, progressBytes + in.length() * in.count());
            }
        }
        relayer.forward(r.targets, in, slot, version, n.checksum() != Notification.Checksum.NOT_REQUESTED, tag);
        completeIfWhole(slot);
    }

    /**
     * Completes the version being assembled in {@code slot} once every rank's plan is known and every piece of each
     * landed, and confirms it to every rank; nothing when none is under way there or it is already complete.
     */
    private void completeIfWhole(int slot) {
        long version = assembling[slot];
        for (PublisherRank x : ranks) {
            if (x != null && (x.plan == null || x.count[slot] < x.plan.pieces().size())) {
                return;
            }
        }
        lock.lock();
        try {
            if (version < 0 || !given[slot] || version <= complete[slot]) {
                return;
            }
            complete[slot] = version;
            latestSlot = slot;
            given[slot] = false;
            consumed[slot] = false;
            landed.signalAll();
        } finally {
            lock.unlock();
        }
        for (PublisherRank x : ranks) {
            if (x != null) {
                sendControl(x, Tags.DONE, version);
            }
        }
    }

    private void countStale() {
        lock.lock();
        try {
            stale++;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for version {@code version} or a newer one, and leases it: its bytes stay as they are until the lease is
     * closed.
     *
     * @param version the oldest version wanted
     * @param timeout how long to wait
     * @return the lease on the newest complete version, at least {@code version}
     * @throws io.rdma4j.engine.TransferTimeoutException when none arrived in time
     * @throws InterruptedException when interrupted while waiting
     */
    public Lease awaitVersion(long version, Duration timeout) throws InterruptedException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                int s = latestSlot;
                if (s >= 0 && complete[s] >= version && !given[s]) {
                    leases[s]++;
                    return new Lease(s, complete[s]);
                }
                if (left <= 0) {
                    throw new io.rdma4j.engine.TransferTimeoutException("no version " + version
                            + " or newer arrived within " + timeout.toMillis() + " ms (latest complete: "
                            + latestVersion() + "): is the trainer publishing?");
                }
                left = landed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return control writes to the publisher ranks (joins, confirmations, frees) that failed or could not be sent}: a
     * publisher restarting explains some; a confirmation among them leaves the publisher counting this subscriber as
     * failed for that version
     */
    public long controlWriteFailures() {
        return controls.failures();
    }

    /** {@return the last control write that failed: to whom, which message and why, or null} */
    public String lastControlWriteFailure() {
        return controls.lastFailure();
    }

    /** {@return the bytes of one version this subscriber needs: its parts of every tensor} */
    public long bytesPerVersion() {
        return neededBytes;
    }

    /**
     * {@return the newest version whose bytes have begun to land here, or -1}, for progress reports;
     * {@link #bytesLanded()} counts its bytes
     */
    public long versionLanding() {
        return progressVersion;
    }

    /**
     * {@return bytes of {@link #versionLanding()} landed so far}, up to {@link #bytesPerVersion()} once it is complete;
     * a sample for progress reports, not a promise that those bytes are readable (only a lease is)
     */
    public long bytesLanded() {
        return progressBytes;
    }

    /** {@return the newest complete version, or -1} */
    public long latestVersion() {
        lock.lock();
        try {
            return latestSlot < 0 ? -1 : complete[latestSlot];
        } finally {
            lock.unlock();
        }
    }

    /** {@return notifications not counted: another version, epoch, plan or buffer than expected} */
    public long staleNotifications() {
        lock.lock();
        try {
            return stale;
        } finally {
            lock.unlock();
        }
    }

    /** {@return pieces whose CRC32C did not match (not counted; the publisher reports the subscriber failed)} */
    public long checksumMismatches() {
        lock.lock();
        try {
            return mismatches;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return forwards this subscriber's relay failed to make}: refused at once, or failed or timed out on their way.
     * The publisher routes around a relay whose next subscribers do not confirm; this count says why they did not.
     */
    public long relayFailures() {
        return relayer.failures();
    }

    /** {@return what the last failed forward said (its target, version and error), or null if none failed} */
    public String lastRelayFailure() {
        return relayer.lastFailure();
    }

    private void release(int slot) {
        lock.lock();
        try {
            leases[slot]--;
            consumed[slot] = true;
        } finally {
            lock.unlock();
        }
        for (PublisherRank r : ranks) {
            if (r != null) {
                sendControl(r, Tags.FREE, 0);
            }
        }
    }

    /** A complete version, held: its tensors do not change until {@link #close()}. */
    public final class Lease implements AutoCloseable {
        private final int slot;
        private final long version;
        private boolean open = true;

        private Lease(int slot, long version) {
            this.slot = slot;
            this.version = version;
        }

        /** {@return the version} */
        public long version() {
            return version;
        }

        /**
         * {@return the parts of the tensors this subscriber needs, as views of its buffer, in the publisher's order},
         * with the lowest trainer rank's metadata and {@code rdma4j.version}
         */
        public TensorSet tensors() {
            List<Tensor> l = new ArrayList<>();
            MemorySegment seg = slotBuffers[slot].segment();
            for (int t = 0; t < metas.size(); t++) {
                Shard need = needs.get(t);
                if (need != null) {
                    TensorMeta tm = metas.get(t);
                    l.add(Tensor.host(
                            tm.name(), tm.dtype(), need.shape(tm.shape()), seg.asSlice(offsets[t], tm.bytes(need))));
                }
            }
            Map<String, String> md = new java.util.LinkedHashMap<>(metadata);
            md.put("rdma4j.version", Long.toString(version));
            return new TensorSet(l, md);
        }

        /** Releases the version's buffer for a later version; idempotent. */
        @Override
        public void close() {
            if (open) {
                open = false;
                release(slot);
            }
        }
    }

    /** Stops the thread, withdraws the buffers and frees them; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        watch.close();
        thread.interrupt();
        try {
            // the thread may be issuing a confirmation (its version just completed): it must be among the writes in
            // flight before awaitSent looks, however slow a loaded machine makes it
            thread.join(ControlWrites.DEADLINE.toMillis());
            relayer.stop(Duration.ofSeconds(2));
            // a confirmation sent just before close (a subscriber that exits once it has its version) must still reach
            // the publisher, however long a loaded machine takes to deliver it: closing the engine under it would
            // cancel it, and the publisher would count a failure
            controls.awaitSent();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeResources();
    }

    private void closeResources() {
        List<AutoCloseable> l = new ArrayList<>();
        for (String name : List.of(WANT, INBOX, SLOT + 0, SLOT + 1)) {
            l.add(() -> {
                try {
                    engine.unpublish(name);
                } catch (io.rdma4j.engine.UnknownBufferException | io.rdma4j.ClosedException e) {
                    // not published, or the engine is gone
                }
            });
        }
        if (slotBuffers != null) {
            l.addAll(List.of(slotBuffers));
        }
        l.add(inbox);
        l.add(want);
        l.add(ctl);
        l.add(() -> {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        });
        Closeables.closeAll(l);
    }
}
