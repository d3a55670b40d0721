package io.rdma4j.perf.soak;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferBatch;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferRequest;
import io.rdma4j.engine.UnknownBufferException;
import io.rdma4j.engine.UnknownPeerException;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The steady traffic from one engine of the soak to one peer engine in another process: one operation at a time, chosen
 * at random, each with a deadline and a CRC32C the target checks:
 *
 * <ul>
 *   <li>write: up to 2 MiB (striped over lanes) into one of {@link #SLOTS} slots of the peer's buffer;
 *   <li>read: a slot whose contents are known back, compared byte by byte with what was written;
 *   <li>batch: 2 to 6 writes to distinct slots in one {@code writeAll};
 *   <li>tagged: a small write whose notification the peer process takes and checks against the pattern itself.
 * </ul>
 *
 * A write that did not complete leaves its slot unknown and out of use for {@link #QUARANTINE}: chunks of a cancelled,
 * timed-out or failed write may still be on the wire ({@code Transfer.cancel}), and must not land in a later write's
 * checked range. Storms ({@link #storm}) use their own region of the peer's buffer, alternating halves.
 */
final class Traffic implements Runnable {
    static final long SLOT = 2 << 20;
    static final int SLOTS = 16;
    static final long TAG_SLOT = 128 << 10;
    static final int TAG_SLOTS = 8;
    static final long STORM_SLOT = 256 << 10;
    static final int STORM_BURST = 12;
    static final long TAG_BASE = SLOT * SLOTS;
    static final long STORM_BASE = TAG_BASE + TAG_SLOT * TAG_SLOTS;
    /** The buffer each peer engine publishes: slots, tagged slots, two storm halves. */
    static final long REMOTE_BYTES = STORM_BASE + 2 * STORM_SLOT * STORM_BURST;

    static final Duration DEADLINE = Duration.ofSeconds(10);
    static final Duration QUARANTINE = Duration.ofSeconds(3);

    private final String label;
    private final TransferEngine engine;
    private final String provider;
    private final ChildProcess peer;
    private final String peerEngine;
    private final Ledger ledger;
    private final SplittableRandom random;
    private final SplittableRandom stormRandom;
    private final LocalBuffer src;
    private final LocalBuffer dst;
    private final LocalBuffer stormSrc;
    private final LocalBuffer stormDst;
    private final long[] seed = new long[SLOTS];
    private final long[] length = new long[SLOTS];
    private final boolean[] known = new boolean[SLOTS];
    private final long[] usableAt = new long[SLOTS + TAG_SLOTS];
    private int tagCursor;
    private int stormHalf;
    private volatile RemoteBuffer remote;
    private volatile boolean running = true;
    private volatile boolean paused;
    private volatile boolean idle;

    Traffic(
            TransferEngine engine,
            String provider,
            ChildProcess peer,
            String peerEngine,
            Ledger ledger,
            Arena arena,
            long seed) {
        this.label = provider + " -> " + peerEngine;
        this.engine = engine;
        this.provider = provider;
        this.peer = peer;
        this.peerEngine = peerEngine;
        this.ledger = ledger;
        this.random = new SplittableRandom(seed);
        this.stormRandom = random.split();
        this.src = engine.register(arena.allocate(SLOT, 4096));
        this.dst = engine.register(arena.allocate(SLOT, 4096));
        this.stormSrc = engine.register(arena.allocate(STORM_SLOT * STORM_BURST, 4096));
        this.stormDst = engine.register(arena.allocate(STORM_SLOT * STORM_BURST, 4096));
    }

    String label() {
        return label;
    }

    /** Stops starting operations, or starts again; {@link #idle} says when the current one ended. */
    void pause(boolean p) {
        idle = false;
        paused = p;
    }

    boolean idle() {
        return idle;
    }

    void stop() {
        running = false;
    }

    @Override
    public void run() {
        while (running) {
            if (paused) {
                idle = true;
                sleep(20);
                continue;
            }
            RemoteBuffer r = remote != null ? remote : resolve();
            if (r == null) {
                sleep(200);
                continue;
            }
            int dice = random.nextInt(100);
            if (dice < 35) {
                write(r);
            } else if (dice < 65) {
                read(r);
            } else if (dice < 80) {
                batch(r);
            } else {
                tagged(r);
            }
        }
        idle = true;
    }

    private RemoteBuffer resolve() {
        try {
            RemoteBuffer r = engine.peer(peerEngine).buffer("soak");
            java.util.Arrays.fill(known, false); // a new peer, or a new incarnation of it: nothing known there
            remote = r;
            return r;
        } catch (RuntimeException e) {
            ledger.lookupFailed(e);
            return null;
        }
    }

    private static TransferOptions checked(long seed, Duration deadline) {
        return TransferOptions.DEFAULT.withDeadline(deadline).withTag(seed).withCrc32c();
    }

    /** A length of 8-byte words from {@code min} to {@code max} bytes. */
    private static long size(SplittableRandom r, long min, long max) {
        return 8 * r.nextLong(min / 8, max / 8 + 1);
    }

    private int freeSlot() {
        long now = System.nanoTime();
        int start = random.nextInt(SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            int s = (start + i) % SLOTS;
            if (now - usableAt[s] >= 0) {
                return s;
            }
        }
        return -1;
    }

    private void quarantine(int slot) {
        usableAt[slot] = System.nanoTime() + QUARANTINE.toNanos();
    }

    /** Waits for {@code t}; {@return its failure, or null}. */
    private static Throwable outcome(Transfer t) {
        try {
            t.future().join();
            return null;
        } catch (RuntimeException e) {
            return Ledger.unwrap(e);
        }
    }

    /** After a failure: a peer that is gone, or not (yet) there, is resolved afresh. */
    private void noteFailure(Throwable e) {
        if (e instanceof PeerLostException
                || e instanceof UnknownPeerException
                || e instanceof UnknownBufferException) {
            remote = null;
        }
    }

    private void write(RemoteBuffer r) {
        int slot = freeSlot();
        if (slot < 0) {
            sleep(10);
            return;
        }
        long len = size(random, 4096, SLOT);
        long s = random.nextLong() & Long.MAX_VALUE; // top bit clear: the peer leaves the check to its engine
        Pattern.fill(src.segment(), s, len);
        known[slot] = false;
        long id = ledger.begin(Ledger.Kind.WRITE, DEADLINE);
        Throwable e;
        try {
            Transfer t = engine.write(src, 0, r, slot * SLOT, len, checked(s, DEADLINE));
            ledger.follow(id, t);
            e = outcome(t);
        } catch (RuntimeException x) {
            ledger.failed(id, x);
            e = x;
        }
        if (e == null) {
            ledger.verified(len); // the target's engine checked its CRC32C
            seed[slot] = s;
            length[slot] = len;
            known[slot] = true;
        } else {
            quarantine(slot);
            noteFailure(e);
        }
    }

    private void read(RemoteBuffer r) {
        int start = random.nextInt(SLOTS);
        int slot = -1;
        for (int i = 0; i < SLOTS && slot < 0; i++) {
            slot = known[(start + i) % SLOTS] ? (start + i) % SLOTS : -1;
        }
        if (slot < 0) {
            write(r);
            return;
        }
        long len = length[slot];
        long id = ledger.begin(Ledger.Kind.READ, DEADLINE);
        Throwable e;
        try {
            Transfer t = engine.read(dst, 0, r, slot * SLOT, len, TransferOptions.DEFAULT.withDeadline(DEADLINE));
            ledger.follow(id, t);
            e = outcome(t);
        } catch (RuntimeException x) {
            ledger.failed(id, x);
            e = x;
        }
        if (e == null) {
            long bad = Pattern.corruptBytes(dst.segment(), seed[slot], len);
            if (bad == 0) {
                ledger.verified(len);
            } else {
                ledger.corrupt(bad, label + ": read back of slot " + slot);
            }
        } else {
            noteFailure(e);
        }
    }

    private void batch(RemoteBuffer r) {
        int n = 2 + random.nextInt(5);
        List<Integer> slots = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int slot = freeSlot();
            if (slot >= 0 && !slots.contains(slot)) {
                slots.add(slot);
            }
        }
        if (slots.isEmpty()) {
            sleep(10);
            return;
        }
        long part = SLOT / 8; // each request's source: its own 256 KiB of src
        List<TransferRequest> requests = new ArrayList<>();
        long[] seeds = new long[slots.size()];
        long[] lens = new long[slots.size()];
        long[] ids = new long[slots.size()];
        for (int i = 0; i < slots.size(); i++) {
            seeds[i] = random.nextLong() & Long.MAX_VALUE;
            lens[i] = size(random, 4096, part);
            Pattern.fill(src.segment().asSlice(i * part), seeds[i], lens[i]);
            known[slots.get(i)] = false;
            requests.add(
                    new TransferRequest(src, i * part, r, slots.get(i) * SLOT, lens[i], checked(seeds[i], DEADLINE)));
            ids[i] = ledger.begin(Ledger.Kind.BATCH, DEADLINE);
        }
        TransferBatch b;
        try {
            b = engine.writeAll(requests);
        } catch (RuntimeException x) {
            for (long id : ids) {
                ledger.failed(id, x);
            }
            slots.forEach(this::quarantine);
            noteFailure(x);
            return;
        }
        for (int i = 0; i < b.size(); i++) {
            ledger.follow(ids[i], b.get(i));
        }
        for (int i = 0; i < b.size(); i++) {
            Throwable e = outcome(b.get(i));
            int slot = slots.get(i);
            if (e == null) {
                ledger.verified(lens[i]);
                seed[slot] = seeds[i];
                length[slot] = lens[i];
                known[slot] = true;
            } else {
                quarantine(slot);
                noteFailure(e);
            }
        }
    }

    private void tagged(RemoteBuffer r) {
        int slot = tagCursor++ % TAG_SLOTS;
        if (System.nanoTime() - usableAt[SLOTS + slot] < 0) {
            return;
        }
        long len = size(random, 512, TAG_SLOT);
        long s = random.nextLong() | Long.MIN_VALUE; // top bit set: the peer process checks it
        Pattern.fill(src.segment(), s, len);
        Duration deadline = DEADLINE.plus(SoakPeer.AWAIT);
        long id = ledger.begin(Ledger.Kind.TAGGED, deadline);
        Throwable e;
        try {
            Transfer t = engine.write(src, 0, r, TAG_BASE + slot * TAG_SLOT, len, checked(s, DEADLINE));
            e = outcome(t);
        } catch (RuntimeException x) {
            e = x;
        }
        if (e != null) {
            ledger.failed(id, e);
            usableAt[SLOTS + slot] = System.nanoTime() + QUARANTINE.toNanos();
            noteFailure(e);
            return;
        }
        String verdict;
        try {
            verdict = peer.await(provider, s).get(SoakPeer.AWAIT.toSeconds() + 5, TimeUnit.SECONDS);
        } catch (Exception x) {
            ledger.failed(id, x);
            return;
        }
        String[] f = verdict.split(" ");
        switch (f[0]) {
            case "OK" -> {
                ledger.succeeded(id);
                ledger.verified(len);
            }
            case "BAD" -> {
                ledger.succeeded(id);
                ledger.corrupt(Long.parseLong(f[1]), label + ": tagged write checked by the peer process");
            }
            default ->
                ledger.failed(
                        id,
                        new Ledger.SoakFailure(
                                "notification missing at the target",
                                peerEngine + " saw no notification for tag " + s + " (" + verdict + ")"));
        }
    }

    /**
     * A burst of {@link #STORM_BURST} writes and reads into this traffic's storm region, all at once: with deadlines of
     * 20 µs to 2 ms (most pass before the transfer ends), or cancelled at once or after up to a millisecond.
     *
     * @return false when the peer is not resolved now
     */
    boolean storm(Ledger.Kind kind) {
        RemoteBuffer r = remote;
        if (r == null) {
            return false;
        }
        SplittableRandom rnd = stormRandom;
        long base = STORM_BASE + (stormHalf ^= 1) * STORM_SLOT * STORM_BURST;
        List<Transfer> started = new ArrayList<>();
        for (int i = 0; i < STORM_BURST; i++) {
            long len = size(rnd, 8192, STORM_SLOT);
            long s = rnd.nextLong() & Long.MAX_VALUE;
            Duration deadline =
                    kind == Ledger.Kind.DEADLINE_STORM ? Duration.ofNanos(rnd.nextLong(20_000, 2_000_000)) : DEADLINE;
            long id = ledger.begin(kind, deadline);
            try {
                Transfer t;
                if (rnd.nextBoolean()) {
                    Pattern.fill(stormSrc.segment().asSlice(i * STORM_SLOT), s, len);
                    t = engine.write(stormSrc, i * STORM_SLOT, r, base + i * STORM_SLOT, len, checked(s, deadline));
                } else {
                    t = engine.read(
                            stormDst,
                            i * STORM_SLOT,
                            r,
                            base + i * STORM_SLOT,
                            len,
                            TransferOptions.DEFAULT.withDeadline(deadline));
                }
                ledger.follow(id, t);
                started.add(t);
            } catch (RuntimeException e) {
                ledger.failed(id, e);
            }
        }
        if (kind == Ledger.Kind.CANCEL_STORM) {
            for (Transfer t : started) {
                if (rnd.nextBoolean()) {
                    java.util.concurrent.locks.LockSupport.parkNanos(rnd.nextLong(1_000_000));
                }
                t.cancel();
            }
        }
        return true;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
