package io.rdma4j.engine.internal;

import io.rdma4j.Closeables;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.zip.CRC32C;

/**
 * What peers send us: one inbox per initiator (by the 16-bit id its immediates carry), the records delivered from them,
 * the CRC32C check of the range a record names, and the verdict word written back for the writer to read.
 */
final class Inbound implements AutoCloseable {
    /**
     * Records in the notification ring we give each initiator ({@code -Drdma4j.engine.inboxSlots}, 1..256, default 256,
     * read when an engine opens). The initiator learns it from the inbox's size.
     */
    static final String INBOX_SLOTS_PROPERTY = "rdma4j.engine.inboxSlots";

    /**
     * What we gave one initiator: connections from our lanes and its inbox, while our announcement number
     * {@code announcement} stood, to an initiator that had last heard of its own lease lapsing at the directory's
     * {@code lapseRevision}.
     */
    private record Initiator(
            String name,
            long generation,
            long lapseRevision,
            int[] lanes,
            int[] connections,
            InChannel inbox,
            String inboxName,
            int announcement) {}

    private final String owner;
    private final EngineBackend backend;
    private final List<LaneDescriptor> lanes;
    private final Publications publications;
    private final NotificationQueue notes;
    private final ProgressErrors errors;
    private final int inboxSlots;
    private final Map<String, Initiator> initiators = new ConcurrentHashMap<>();
    private final AtomicReferenceArray<InChannel> inboxes = new AtomicReferenceArray<>(1 << 16);
    private final AtomicInteger nextInbox = new AtomicInteger(1);
    private final List<InChannel> retired = Collections.synchronizedList(new ArrayList<>());
    private final Departures<Initiator> departures;
    private final AtomicLong strayImmediates = new AtomicLong();
    /** Which of our announcements stands (0: the first; one more each time the directory forgot us). */
    private volatile int announcement;

    Inbound(
            String owner,
            EngineBackend backend,
            List<LaneDescriptor> lanes,
            Publications publications,
            NotificationQueue notes,
            ProgressErrors errors,
            int progressThreads) {
        this.owner = owner;
        this.backend = backend;
        this.lanes = lanes;
        this.publications = publications;
        this.notes = notes;
        this.errors = errors;
        this.departures = new Departures<>(progressThreads);
        this.inboxSlots = Integer.getInteger(INBOX_SLOTS_PROPERTY, NotificationRecord.MAX_SLOTS);
        if (inboxSlots < 1 || inboxSlots > NotificationRecord.MAX_SLOTS) {
            throw new InvalidArgumentException("-D" + INBOX_SLOTS_PROPERTY + " must be 1.."
                    + NotificationRecord.MAX_SLOTS + ", got " + inboxSlots);
        }
    }

    /** {@return whether some peer is connected to us (and may be writing or reading our memory), or just left} */
    boolean hasInbound() {
        return !initiators.isEmpty() || departures.any();
    }

    /** {@return whether a peer just left and its inbox waits for every progress thread to poll once} */
    boolean departing() {
        return departures.any();
    }

    /**
     * Gives {@code initiator} (just paired on {@code lanes} with {@code connections}, and last told of its own lease
     * lapsing at {@code lapseRevision}) a fresh inbox.
     */
    void add(String initiator, long generation, long lapseRevision, int[] lanes, int[] connections) {
        int id = allocateInbox();
        InChannel ch = new InChannel(backend, initiator, generation, id, inboxSlots);
        inboxes.set(id, ch);
        Initiator old = initiators.put(
                initiator,
                new Initiator(
                        initiator,
                        generation,
                        lapseRevision,
                        lanes,
                        connections,
                        ch,
                        Names.inbox(initiator),
                        announcement));
        if (old != null) {
            departures.add(old, System.nanoTime());
        }
    }

    /**
     * {@code initiator} left or restarted: its connections go and its inbox stops delivering, once what it wrote before
     * it left has been read (see {@link Departures}).
     */
    void drop(String initiator) {
        Initiator old = initiators.remove(initiator);
        if (old != null) {
            departures.add(old, System.nanoTime());
        }
    }

    /**
     * {@code initiator}'s lease lapsed, as the directory recorded at {@code revision}: it goes as in
     * {@link #drop(String)}, unless it connected after it had heard of that lapse itself (it dropped what it had, and
     * what we gave it since is what it uses). {@return whether it went, or nothing of it was here}
     */
    boolean dropLapsed(String initiator, long revision) {
        Initiator in = initiators.get(initiator);
        if (in != null && in.lapseRevision() >= revision) {
            return false;
        }
        if (in != null && initiators.remove(initiator, in)) {
            departures.add(in, System.nanoTime());
        }
        return true;
    }

    /**
     * Progress thread {@code thread} polled all its lanes in a round begun at {@code roundStart}: initiators that left
     * before it, and that every thread has polled past, are retired (here: a disconnect only forgets the peer's
     * address, and the progress threads stop before the backend closes).
     */
    void polled(int thread, long roundStart) {
        if (departures.any()) {
            departures.polled(thread, roundStart).forEach(this::retire);
        }
    }

    /** We announced ourselves again, as announcement number {@code number}: what we give from now on carries it. */
    void announcedAgain(int number) {
        announcement = number;
    }

    /**
     * Every initiator's connections given before our announcement number {@code number} go: the lease of that
     * announcement lapsed, and each initiator saw us leave ({@link Integer#MAX_VALUE}: all of them).
     */
    void dropBefore(int number) {
        for (Initiator in : List.copyOf(initiators.values())) {
            if (in.announcement() < number && initiators.remove(in.name(), in)) {
                departures.add(in, System.nanoTime());
            }
        }
    }

    /** {@return the inbox named {@code bufferName}, as the handshake describes it to its initiator} */
    Optional<BufferInfo> describeInbox(String bufferName) {
        for (Initiator in : initiators.values()) {
            if (in.inboxName().equals(bufferName)) {
                List<LaneKey> keys = new ArrayList<>();
                for (LaneDescriptor d : lanes) {
                    keys.add(new LaneKey(
                            d.index(),
                            in.inbox().registration.remoteAddress(d.index()),
                            in.inbox().registration.remoteKey(d.index())));
                }
                return Optional.of(new BufferInfo(
                        bufferName,
                        owner,
                        in.inbox().length(),
                        MemoryKind.HOST,
                        Locality.UNKNOWN,
                        in.inbox().id,
                        keys,
                        Set.of(in.name())));
            }
        }
        return Optional.empty();
    }

    private int allocateInbox() {
        for (int tries = 0; tries < (1 << 16); tries++) {
            int id = nextInbox.getAndIncrement() & 0xFFFF;
            if (id != 0 && inboxes.get(id) == null) {
                return id;
            }
        }
        throw new IllegalStateException("engine " + owner + " has 65535 initiators connected: no inbox left");
    }

    private void retire(Initiator in) {
        inboxes.compareAndSet(in.inbox().id, in.inbox(), null);
        for (int k = 0; k < in.lanes().length; k++) {
            try {
                backend.disconnect(in.lanes()[k], in.connections()[k]);
            } catch (RuntimeException ignored) {
                // the peer is gone anyway
            }
        }
        // the inbox memory stays registered until close: a late write from the old generation must land somewhere valid
        retired.add(in.inbox());
    }

    /**
     * {@return notification copies that named no inbox this engine holds, and were dropped} (a peer's write after its
     * inbox was retired, or a corrupt immediate)
     */
    long strayImmediates() {
        return strayImmediates.get();
    }

    /** A notification copy arrived (on a progress thread): deliver its record once every copy is in. */
    void onImmediate(int immediate) {
        int id = immediate >>> 16;
        InChannel ch = inboxes.get(id);
        if (ch == null) {
            strayImmediates.incrementAndGet();
            return;
        }
        InChannel.Record r = ch.accept((immediate >>> 8) & 0xFF, immediate & 0xFF);
        if (r == null) {
            return;
        }
        Publications.Published p = publications.byGeneration(r.generation());
        String bufferName = p == null ? null : p.name();
        if (p != null && p.buffer().device != null) {
            // the written range goes to the device (copy or flush) before the user sees the notification: off this
            // thread
            Thread.ofVirtual().start(() -> {
                Notification n = null;
                try {
                    n = DeviceBuffers.deliver(
                            ch.peer, r.tag(), bufferName, p.buffer(), r.offset(), r.length(), r.crc(), r.crcValue());
                    notes.add(n);
                } catch (RuntimeException e) {
                    errors.record(e);
                } finally {
                    // after the notification, so a writer told of the verdict finds it here; always, or the slot stays
                    if (r.crc()) {
                        judged(
                                ch,
                                r.seq(),
                                n == null ? Notification.Checksum.MISMATCH : n.checksum(),
                                n == null ? -1 : n.actualCrc32c());
                    }
                }
            });
            return;
        }
        if (!r.crc()) {
            notes.add(new Notification(
                    ch.peer, r.tag(), bufferName, r.offset(), r.length(), Notification.Checksum.NOT_REQUESTED, -1, -1));
            return;
        }
        // checksum large ranges off the progress thread
        Thread.ofVirtual().start(() -> {
            long actual = -1;
            Notification.Checksum verdict = Notification.Checksum.MISMATCH;
            try {
                if (p != null
                        && r.offset() >= 0
                        && r.length() >= 0
                        && r.offset() <= p.buffer().length() - r.length()
                        && p.buffer().segment.scope().isAlive()) {
                    CRC32C c = new CRC32C();
                    c.update(p.buffer().segment.asSlice(r.offset(), r.length()).asByteBuffer());
                    actual = c.getValue();
                }
                long expected = Integer.toUnsignedLong(r.crcValue());
                // both values go to the user, so a mismatch says what the writer sent and what landed
                verdict = actual == expected ? Notification.Checksum.VERIFIED : Notification.Checksum.MISMATCH;
                notes.add(new Notification(
                        ch.peer, r.tag(), bufferName, r.offset(), r.length(), verdict, expected, actual));
            } catch (RuntimeException e) {
                // the buffer was closed under the check: the writer hears of an unchecked range
                actual = -1;
                verdict = Notification.Checksum.MISMATCH;
                errors.record(e);
            } finally {
                judged(ch, r.seq(), verdict, actual);
            }
        });
    }

    /** Tells the writer of record {@code seq} our verdict (it RDMA-reads the word) and frees the record's slot. */
    private static void judged(InChannel ch, long seq, Notification.Checksum verdict, long actual) {
        int code = verdict == Notification.Checksum.VERIFIED
                ? NotificationRecord.VERDICT_VERIFIED
                : actual < 0 ? NotificationRecord.VERDICT_UNCHECKED : NotificationRecord.VERDICT_MISMATCH;
        ch.verdict(seq, code, actual < 0 ? 0 : (int) actual);
    }

    @Override
    public void close() {
        Closeables.closeAll(
                () -> Closeables.closeAll(
                        initiators.values().stream().map(Initiator::inbox).toList()),
                () -> Closeables.closeAll(
                        departures.takeAll().stream().map(Initiator::inbox).toList()),
                () -> Closeables.closeAll(List.copyOf(retired)));
    }
}
