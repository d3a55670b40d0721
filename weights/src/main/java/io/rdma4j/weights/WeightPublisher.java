package io.rdma4j.weights;

import io.rdma4j.Closeables;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.weights.internal.DropNotices;
import io.rdma4j.weights.internal.Gather;
import io.rdma4j.weights.internal.Member;
import io.rdma4j.weights.internal.MemberSignal;
import io.rdma4j.weights.internal.MemberSignals;
import io.rdma4j.weights.internal.Plan;
import io.rdma4j.weights.internal.Planner;
import io.rdma4j.weights.internal.Sender;
import io.rdma4j.weights.internal.Tags;
import io.rdma4j.weights.internal.TensorMeta;
import io.rdma4j.weights.internal.Wire;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One trainer rank's side of weight sync. It announces its tensors (and the part of each it holds) in a manifest that
 * subscribers read; subscribers join by a notification, and {@link #publish(long)} writes the bytes each needs,
 * one-sided, into the buffer it reserved for that version, directly or relayed along chains of subscribers that need
 * the same bytes ({@link #explain()} shows which). The plan is computed once per set of subscribers and reused for
 * every version. A subscriber that fails is reported and dropped; the others still sync; it rejoins by joining again.
 *
 * <p>Threads: one thread calls {@link #publish}; a control thread owned by the publisher reads notifications.
 *
 * <p>One unit (about 630 lines): admission, planning, the data writes and the confirmations all read and change the
 * same member states and version slots of one publishing thread; what stands alone is in {@code internal} already
 * ({@code Planner}, {@code Gather}, {@code Sender}, {@code Wire}, {@code DropNotices}, {@code MemberSignals}).
 */
public final class WeightPublisher implements AutoCloseable {
    static final String MANIFEST = "w.manifest";
    static final String CONTROL = "w.control";
    static final int INBOX_PER_RANK = 1 << 20;

    private final TransferEngine engine;
    private final int rank;
    private final int epoch;
    private final boolean relay;
    private final long chunk;
    private final Duration deadline;
    private final boolean crc32c;
    private final List<TensorMeta> metas = new ArrayList<>();
    private final List<LocalBuffer> sources = new ArrayList<>();
    private final Arena arena = Arena.ofShared();
    private final LocalBuffer scratch;
    private final LocalBuffer control;
    private final LocalBuffer manifest;
    private Gather gather;
    private final DropNotices drops;
    private final Map<String, MemberState> members = new TreeMap<>();
    private final MemberSignals signals = new MemberSignals();
    private final ConcurrentLinkedQueue<String> joins = new ConcurrentLinkedQueue<>();
    private final Semaphore changed = new Semaphore(0);
    private final Thread controlThread;
    private volatile boolean closed;
    private Plan plan;
    private int nextPlan;
    private long lastVersion;

    private record MemberState(Member member, RemoteBuffer inbox, RemoteBuffer[] slots, MemberSignal signal) {}

    WeightPublisher(WeightPublisherBuilder b) {
        this.engine = b.engine;
        this.rank = b.rank;
        this.relay = b.relay;
        this.chunk = b.chunk;
        this.deadline = b.deadline;
        this.crc32c = b.crc32c;
        this.epoch = new SecureRandom().nextInt(256);
        try {
            for (Tensor t : b.tensors.tensors()) {
                Shard held = b.shards.apply(t.name());
                long[] full = b.fullShapes.getOrDefault(t.name(), t.shape());
                TensorMeta meta = new TensorMeta(t.name(), t.dtype(), full, held);
                if (meta.bytes(held) != t.byteSize()) {
                    throw new InvalidArgumentException("tensor " + t.name() + " holds " + t.byteSize() + " bytes but "
                            + held + " of the full shape " + java.util.Arrays.toString(full) + " takes "
                            + meta.bytes(held) + ": give the full shape with fullShape(name, shape)");
                }
                metas.add(meta);
                sources.add(t.host() != null ? engine.register(t.host()) : engine.register(t.device()));
            }
            scratch = engine.register(arena.allocate(INBOX_PER_RANK, 4096));
            control = engine.register(arena.allocate(4096, 4096));
            byte[] m = Wire.manifest(new Wire.Manifest(epoch, rank, metas, b.tensors.metadata()));
            MemorySegment ms = arena.allocate(Math.max(4096, m.length), 4096);
            MemorySegment.copy(MemorySegment.ofArray(m), 0, ms, 0, m.length);
            manifest = engine.register(ms);
            engine.publish(CONTROL, control, Access.anyPeer());
            engine.publish(MANIFEST, manifest, Access.anyPeer());
            drops = new DropNotices(
                    engine,
                    control,
                    8,
                    WeightSubscriber.INBOX,
                    (long) rank * INBOX_PER_RANK + INBOX_PER_RANK - 16,
                    rank,
                    epoch,
                    deadline);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, this::closeResources);
        }
        controlThread = Thread.ofPlatform()
                .daemon()
                .name("weights-publisher-" + engine.name())
                .start(this::controlLoop);
    }

    /**
     * {@return a builder}
     *
     * @param engine the rank's engine; subscribers name it in {@link WeightSubscriber.Builder}
     * @param tensors the tensors this rank holds; their memory must stay valid until {@link #close()}
     */
    public static WeightPublisherBuilder builder(TransferEngine engine, TensorSet tensors) {
        return new WeightPublisherBuilder(engine, tensors);
    }

    /** Reads subscribers' notifications: joins, confirmations and freed buffers; tells dropped ones again. */
    private void controlLoop() {
        long nextRetry = System.nanoTime();
        while (!closed) {
            if (System.nanoTime() - nextRetry > 0) {
                nextRetry = System.nanoTime() + Duration.ofSeconds(1).toNanos();
                drops.retry();
            }
            Notification n;
            try {
                n = engine.notifications().poll(Duration.ofMillis(100));
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            if (n == null || !CONTROL.equals(n.buffer()) || Tags.controlEpoch(n.tag()) != epoch) {
                continue;
            }
            long tag = n.tag();
            switch (Tags.kind(tag)) {
                case Tags.JOIN -> {
                    drops.joined(n.peer());
                    signals.joined(n.peer(), tag);
                    joins.add(n.peer());
                }
                case Tags.DONE, Tags.FREE -> signals.update(n.peer(), tag);
                default -> {
                    // a kind a subscriber never sends: ignore
                }
            }
            changed.release();
        }
    }

    /** Admits the subscribers that joined since the last version: reads and checks each one's want manifest. */
    private void admit(Map<String, String> refused) {
        for (String name; (name = joins.poll()) != null; ) {
            try {
                RemoteBuffer want = engine.peer(name).buffer(WeightSubscriber.WANT);
                long len = Math.min(want.length(), scratch.length());
                engine.read(scratch, 0, want, 0, len, TransferOptions.DEFAULT.withDeadline(deadline))
                        .join();
                Member m = Wire.want(scratch.segment().asSlice(0, len), name, metas);
                RemoteBuffer[] slots = new RemoteBuffer[m.slots()];
                for (int s = 0; s < slots.length; s++) {
                    slots[s] = engine.peer(name).buffer(WeightSubscriber.SLOT + s);
                    if (slots[s].length() < m.slotBytes()) {
                        throw new InvalidArgumentException(name + "'s buffer " + s + " is shorter than it says");
                    }
                }
                RemoteBuffer inbox = engine.peer(name).buffer(WeightSubscriber.INBOX);
                if (inbox.length() < (long) (rank + 1) * INBOX_PER_RANK) {
                    throw new InvalidArgumentException(name + "'s inbox has no room for rank " + rank);
                }
                members.put(name, new MemberState(m, inbox, slots, signals.get(name)));
                plan = null;
                drops.admitted(name);
            } catch (RuntimeException e) {
                members.remove(name);
                plan = null;
                drops.refused(name, lastVersion);
                refused.put(name, "could not join: " + e.getMessage());
            }
        }
    }

    /**
     * Sends version {@code version} of this rank's tensors (their memory's current contents) to every subscriber, and
     * waits until each confirmed that every byte it needs landed, or failed. The caller must not change the tensors
     * until it returns.
     *
     * <p>A subscriber whose buffer for this version is still leased halfway through the deadline is skipped. One that
     * fails is dropped and told so until it joins again: if it is alive it gets the next version, or with double
     * buffering the one after when the next one's buffer holds its newest complete version.
     *
     * @param version greater than the last one published, at most {@value Tags#MAX_VERSION}
     * @return per subscriber, synced, skipped or failed (and why)
     * @throws InvalidArgumentException when the version does not increase
     */
    public PublishResult publish(long version) throws InterruptedException {
        if (version <= lastVersion || version > Tags.MAX_VERSION) {
            throw new InvalidArgumentException("version " + version + " must be greater than the last published ("
                    + lastVersion + ") and at most " + Tags.MAX_VERSION);
        }
        lastVersion = version;
        long t0 = System.nanoTime();
        Map<String, String> outcome = new LinkedHashMap<>();
        admit(outcome);
        return sync(version, List.copyOf(members.values()), outcome, t0);
    }

    /**
     * Sends the last published version to the subscribers that joined since and have not confirmed it, so that a
     * long-running publisher of fixed weights serves late joiners (as {@code ./rdma4j weights publish} does). The
     * tensors must still hold that version's contents. Call it from the thread that publishes.
     *
     * @return per subscriber sent to (none when every one has it, or nothing was published yet)
     */
    public PublishResult catchUp() throws InterruptedException {
        long t0 = System.nanoTime();
        Map<String, String> outcome = new LinkedHashMap<>();
        admit(outcome);
        List<MemberState> behind = new ArrayList<>();
        if (lastVersion > 0) {
            for (MemberState m : members.values()) {
                if (m.signal().done < lastVersion) {
                    behind.add(m);
                }
            }
        }
        return sync(lastVersion, behind, outcome, t0);
    }

    private PublishResult sync(long version, List<MemberState> targets, Map<String, String> outcome, long t0)
            throws InterruptedException {
        long end = t0 + deadline.toNanos();
        Map<String, PublishResult.Status> status = new LinkedHashMap<>();
        outcome.keySet().forEach(k -> status.put(k, PublishResult.Status.FAILED));
        // a subscriber's buffer for this version must be free: wait for it up to half the deadline, so that one
        // still holding it (a long lease) is skipped with the other half left for those that are ready
        long bufferEnd = t0 + deadline.toNanos() / 2;
        List<MemberState> ready = new ArrayList<>();
        for (MemberState m : targets) {
            if (m.signal().done >= version) {
                // it confirmed this version already, so every byte it needs landed: this rank had none for it (an
                // aligned subscriber of another rank's part), and the rank that had them published first
                status.put(m.member().name(), PublishResult.Status.SYNCED);
                continue;
            }
            int slot = (int) (version % m.member().slots());
            // the buffer holding its newest complete version frees only once a newer one lands in the other: it
            // missed the version before, and takes the next one
            boolean newest = m.signal().newest == slot;
            while ((m.signal().mask & (1 << slot)) == 0 && !newest && System.nanoTime() < bufferEnd) {
                changed.tryAcquire(Math.max(1, (bufferEnd - System.nanoTime()) / 1000), TimeUnit.MICROSECONDS);
                newest = m.signal().newest == slot;
            }
            if ((m.signal().mask & (1 << slot)) == 0) {
                status.put(m.member().name(), PublishResult.Status.SKIPPED);
                outcome.put(
                        m.member().name(),
                        newest
                                ? "its buffer " + slot + " holds its newest complete version, which it keeps serving:"
                                        + " it missed the version before, and takes the next one"
                                : "its buffer " + slot + " still holds a version in use");
            } else {
                ready.add(m);
            }
        }
        long pubBytes = 0;
        long relayBytes = 0;
        List<String> resent = new ArrayList<>();
        List<MemberState> pending = new ArrayList<>(ready);
        boolean repaired = false;
        boolean relayRound = relay;
        while (!pending.isEmpty()) {
            Plan p = planFor(pending, relayRound, outcome, status, end);
            pending.removeIf(m -> status.get(m.member().name()) == PublishResult.Status.FAILED);
            if (p == null || pending.isEmpty()) {
                break;
            }
            pubBytes += p.publisherBytes();
            relayBytes += p.relayedBytes();
            if (!repaired) {
                // the buffer is ours until the subscriber frees it again. Not in the repair round: the buffer was
                // taken in the first, and a late confirmation may since have freed it; clearing it again would lose
                // that free and stall the next version until the deadline
                for (MemberState m : pending) {
                    m.signal().take((int) (version % m.member().slots()));
                }
            }
            Map<String, List<CompletableFuture<?>>> writes = sendData(p, pending, version, end);
            long written = awaitWrites(writes, outcome, status, end);
            // a failed member may have been a relay: route around it at once; else wait a grace per hop of the chains
            boolean lost = pending.stream().anyMatch(m -> status.get(m.member().name()) != null);
            long pace = Math.max(Duration.ofMillis(500).toNanos(), 2 * (written - t0) * p.hops());
            long grace = lost ? written : written + pace;
            // after the repair round nothing is left to try: its members get the rest of the deadline, not a grace
            awaitDone(pending, version, status, repaired ? end : Math.min(end, grace));
            List<MemberState> missing = new ArrayList<>();
            for (MemberState m : pending) {
                String n = m.member().name();
                if (status.get(n) == null && m.signal().done < version) {
                    missing.add(m);
                }
            }
            if (missing.isEmpty() || repaired || System.nanoTime() >= end) {
                for (MemberState m : missing) {
                    status.put(m.member().name(), PublishResult.Status.FAILED);
                    outcome.put(
                            m.member().name(),
                            "did not confirm version " + version + " within the deadline (" + deadline.toMillis()
                                    + " ms)");
                }
                break;
            }
            // a relay upstream of them failed, or they are slow: probe, and resend directly to those alive
            pending = probe(missing, outcome, status);
            for (MemberState m : pending) {
                resent.add(m.member().name());
                outcome.put(
                        m.member().name(),
                        lost
                                ? "its pieces were resent directly: another subscriber failed this version, and"
                                        + " may have relayed to it"
                                : "its pieces were resent directly: it had not confirmed " + pace / 1_000_000
                                        + " ms after this rank's last write");
            }
            repaired = true;
            relayRound = false;
        }
        List<PublishResult.Outcome> out = new ArrayList<>();
        for (MemberState m : ready) {
            String n = m.member().name();
            if (status.get(n) == null) {
                status.put(n, PublishResult.Status.SYNCED);
            }
        }
        for (Map.Entry<String, PublishResult.Status> e : status.entrySet()) {
            out.add(new PublishResult.Outcome(e.getKey(), e.getValue(), outcome.get(e.getKey())));
            MemberState gone = e.getValue() == PublishResult.Status.FAILED ? members.remove(e.getKey()) : null;
            if (gone != null) {
                signals.remove(e.getKey());
                plan = null;
                drops.dropped(e.getKey(), gone.inbox(), version);
            }
        }
        return new PublishResult(version, System.nanoTime() - t0, pubBytes, relayBytes, out, resent);
    }

    /** The plan for {@code ms}: the cached one when they are the current members, else a new one sent to each. */
    private Plan planFor(
            List<MemberState> ms,
            boolean relayRound,
            Map<String, String> outcome,
            Map<String, PublishResult.Status> status,
            long end) {
        boolean all = ms.size() == members.size() && relayRound == relay;
        if (all && plan != null) {
            return plan;
        }
        List<Member> list = ms.stream().map(MemberState::member).toList();
        nextPlan = (nextPlan + 1) & 0xff;
        Plan p = Planner.plan(nextPlan, metas, list, relayRound, chunk);
        List<CompletableFuture<?>> sends = new ArrayList<>();
        boolean[][] one = Gather.oneWrites(p, Gather.host(sources));
        int notices = drops.next(); // after the admissions this plan follows: their refusals' notices come before it
        for (int i = 0; i < list.size(); i++) {
            byte[] msg = Wire.plan(Wire.planFor(p, one, i, rank, epoch, notices));
            MemberState m = ms.get(i);
            if (msg.length > INBOX_PER_RANK) {
                status.put(m.member().name(), PublishResult.Status.FAILED);
                outcome.put(
                        m.member().name(),
                        "its plan takes " + msg.length + " bytes, over the inbox's " + INBOX_PER_RANK
                                + ": raise the chunk size");
                sends.add(CompletableFuture.completedFuture(null));
                continue;
            }
            MemorySegment.copy(MemorySegment.ofArray(msg), 0, scratch.segment(), 0, msg.length);
            try {
                sends.add(engine.write(
                                scratch,
                                0,
                                m.inbox(),
                                (long) rank * INBOX_PER_RANK,
                                msg.length,
                                TransferOptions.tag(Tags.data(Tags.PLAN, rank, epoch, p.id(), 0, 0))
                                        .withDeadline(Duration.ofNanos(Math.max(1, end - System.nanoTime()))))
                        .future());
                // the scratch is reused for the next member's plan: wait for this one
                sends.getLast().join();
            } catch (RuntimeException e) {
                status.put(m.member().name(), PublishResult.Status.FAILED);
                outcome.put(m.member().name(), "could not receive the plan: " + rootMessage(e));
            }
        }
        // the members just sent this plan no longer hold the cached one (plans are numbered): after a repair round
        // or a catch-up, the next version sends its plan to every member again instead of writing under a number
        // these members dropped, which they would count stale and the publisher resend every version
        plan = all ? p : null;
        return p;
    }

    private Map<String, List<CompletableFuture<?>>> sendData(Plan p, List<MemberState> ms, long version, long end)
            throws InterruptedException {
        Map<String, List<CompletableFuture<?>>> writes = new HashMap<>();
        TransferOptions base = TransferOptions.DEFAULT.withDeadline(deadline);
        for (int j = 0; j < ms.size(); j++) {
            // each rank starts at its own member: ranks writing to every member (resharded) then write to different
            // ones at once, not two into one receiver's link (and, over shm, its lock) while another waits
            int i = (j + rank) % ms.size();
            MemberState m = ms.get(i);
            RemoteBuffer slot = m.slots()[(int) (version % m.member().slots())];
            List<CompletableFuture<?>> fs = new ArrayList<>();
            List<Plan.Piece> in = p.incoming().get(i);
            for (int k : p.publisherPieces(i)) {
                Plan.Piece x = in.get(k);
                TransferOptions o = base.withTag(Tags.data(Tags.DATA, rank, epoch, p.id(), version, k));
                o = crc32c ? o.withCrc32c() : o;
                LocalBuffer src = sources.get(x.tensor());
                if (Gather.oneWrite(src, x.runs())) {
                    if (gather == null) {
                        gather = new Gather(engine, chunk, Gather.stagedBytes(p, Gather.host(sources)));
                    }
                    fs.add(gather.send(engine, src, slot, x.runs(), o, end));
                } else {
                    fs.add(Sender.send(engine, src, slot, x.runs(), o));
                }
            }
            writes.put(m.member().name(), fs);
        }
        return writes;
    }

    /** Waits for this rank's own writes; returns when the last settled. */
    private long awaitWrites(
            Map<String, List<CompletableFuture<?>>> writes,
            Map<String, String> outcome,
            Map<String, PublishResult.Status> status,
            long end) {
        for (Map.Entry<String, List<CompletableFuture<?>>> e : writes.entrySet()) {
            for (CompletableFuture<?> f : e.getValue()) {
                try {
                    f.get(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (Exception x) {
                    if (status.get(e.getKey()) == null) {
                        status.put(e.getKey(), PublishResult.Status.FAILED);
                        outcome.put(e.getKey(), "write failed: " + rootMessage(x));
                    }
                    e.getValue().forEach(g -> g.cancel(false));
                    break;
                }
            }
        }
        return System.nanoTime();
    }

    private void awaitDone(List<MemberState> ms, long version, Map<String, PublishResult.Status> status, long until)
            throws InterruptedException {
        while (true) {
            boolean all = true;
            for (MemberState m : ms) {
                all &= status.get(m.member().name()) != null || m.signal().done >= version;
            }
            long left = until - System.nanoTime();
            if (all || left <= 0) {
                return;
            }
            changed.tryAcquire(left / 1000 + 1, TimeUnit.MICROSECONDS);
        }
    }

    /** Writes a small tagged probe to each; returns those that answered, marking the others failed. */
    private List<MemberState> probe(
            List<MemberState> ms, Map<String, String> outcome, Map<String, PublishResult.Status> status) {
        List<MemberState> alive = new ArrayList<>();
        for (MemberState m : ms) {
            try {
                engine.write(
                                control,
                                0,
                                m.inbox(),
                                (long) rank * INBOX_PER_RANK + INBOX_PER_RANK - 8,
                                8,
                                TransferOptions.tag(Tags.data(Tags.PING, rank, epoch, 0, 0, 0))
                                        .withDeadline(Duration.ofSeconds(2)))
                        .join();
                alive.add(m);
            } catch (RuntimeException e) {
                status.put(m.member().name(), PublishResult.Status.FAILED);
                outcome.put(m.member().name(), "lost: " + rootMessage(e));
            }
        }
        return alive;
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null
                && (t instanceof java.util.concurrent.CompletionException
                        || t instanceof java.util.concurrent.ExecutionException)) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /**
     * Waits until at least {@code count} subscribers joined and were admitted, so that the next {@link #publish} goes
     * to them. Call it from the thread that publishes.
     *
     * @param count how many subscribers to wait for
     * @param timeout how long to wait
     * @return the names of the subscribers admitted
     * @throws io.rdma4j.engine.TransferTimeoutException when fewer joined in time; it names those refused and why
     */
    public List<String> awaitSubscribers(int count, Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        Map<String, String> refused = new LinkedHashMap<>();
        while (true) {
            admit(refused);
            if (members.size() >= count) {
                return subscribers();
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new io.rdma4j.engine.TransferTimeoutException(members.size() + " of " + count
                        + " subscriber(s) joined " + engine.name() + " within " + timeout.toMillis() + " ms"
                        + (refused.isEmpty() ? "" : " (refused: " + refused + ")")
                        + ": start them, and check they name this engine");
            }
            changed.tryAcquire(Math.min(left, Duration.ofMillis(50).toNanos()), TimeUnit.NANOSECONDS);
        }
    }

    /** {@return the names of the subscribers admitted so far} */
    public List<String> subscribers() {
        return List.copyOf(members.keySet());
    }

    /**
     * {@return the plan for the current subscribers, as text: per tensor, the part this rank holds and, per subscriber,
     * the part it needs, how many pieces, bytes and one-sided writes, and whether they come from this rank or are
     * relayed by another subscriber}. Call it from the thread that publishes.
     */
    public String explain() throws InterruptedException {
        admit(new LinkedHashMap<>());
        List<Member> list = members.values().stream().map(MemberState::member).toList();
        Plan p = Planner.plan(0, metas, list, relay, chunk);
        return PlanText.render(
                engine.name(), rank, epoch, metas, list, relay, chunk, p, Gather.oneWrites(p, Gather.host(sources)));
    }

    /** {@return the tag a drop notice numbered {@code number} after {@code version} carries} For fault injection. */
    long dropNoticeTag(long version, int number) {
        return Tags.data(Tags.DROP, rank, epoch, 0, version, number & 0xffff);
    }

    /** {@return the number this rank's next drop notice takes} */
    int nextDropNotice() {
        return drops.next();
    }

    /** Stops the control thread, withdraws the manifest and releases the registrations; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        controlThread.interrupt();
        try {
            controlThread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeResources();
    }

    private void closeResources() {
        List<AutoCloseable> l = new ArrayList<>();
        l.add(() -> quietUnpublish(MANIFEST));
        l.add(() -> quietUnpublish(CONTROL));
        l.add(() -> {
            if (gather != null) {
                gather.close();
            }
        });
        l.addAll(sources);
        l.add(scratch);
        l.add(control);
        l.add(manifest);
        l.add(() -> {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        });
        Closeables.closeAll(l);
    }

    private void quietUnpublish(String name) {
        try {
            engine.unpublish(name);
        } catch (io.rdma4j.engine.UnknownBufferException | io.rdma4j.ClosedException e) {
            // never published, or the engine is gone: nothing to withdraw
        }
    }
}
