package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.EngineBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Our inbox for one initiator: {@code slots} records followed by the consumed counter the initiator reads for flow
 * control, then one verdict word per slot. A record is delivered exactly once, when copies from every lane it names
 * have arrived: repeated immediates (EFA may deliver one more than once) only set a bit already set, and a sequence
 * already delivered is dropped.
 *
 * <p>A slot is consumed once its verdict word is written: at delivery for a record without a CRC, and only after the
 * check ({@link #verdict}) for one with a CRC, so the initiator cannot send into the slot again before its verdict is
 * there to read.
 */
final class InChannel implements AutoCloseable {
    final String peer;
    final long peerGeneration;
    final int id;
    final int slots;
    final MemorySegment inbox;
    final BackendRegistration registration;
    private final Arena arena = Arena.ofShared();
    private final long[] deliveredSeq;
    private final long[] pendingSeq;
    private final long[] seenLanes;
    /** Per slot: the last sequence whose verdict word is written (the slot may be consumed up to it). */
    private final long[] doneSeq;

    private long consumed;
    long duplicates;
    long invalid;

    /** A record accepted from the ring. */
    record Record(long seq, long tag, long generation, long offset, long length, boolean crc, int crcValue) {}

    InChannel(EngineBackend backend, String peer, long peerGeneration, int id, int slots) {
        this.peer = peer;
        this.peerGeneration = peerGeneration;
        this.id = id;
        this.slots = slots;
        this.inbox = arena.allocate(NotificationRecord.inboxBytes(slots), 64);
        this.registration = backend.register(inbox);
        this.deliveredSeq = new long[slots];
        this.pendingSeq = new long[slots];
        this.seenLanes = new long[slots];
        this.doneSeq = new long[slots];
        Arrays.fill(deliveredSeq, -1);
        Arrays.fill(doneSeq, -1);
        Arrays.fill(pendingSeq, -1);
    }

    /** Handles a copy for {@code slot} from initiator lane {@code lane}; returns the record to deliver, or null. */
    synchronized Record accept(int slot, int lane) {
        if (slot < 0 || slot >= slots || lane < 0 || lane >= NotificationRecord.MAX_LANES) {
            invalid++;
            return null;
        }
        MemorySegment r = inbox.asSlice((long) slot * NotificationRecord.SLOT_BYTES, NotificationRecord.SLOT_BYTES);
        long seq = r.get(NotificationRecord.LONG, NotificationRecord.SEQ);
        long lanes = r.get(NotificationRecord.LONG, NotificationRecord.LANES);
        if (seq < 0 || seq % slots != slot || lanes == 0) {
            invalid++;
            return null;
        }
        if (seq <= deliveredSeq[slot]) {
            duplicates++;
            return null;
        }
        if (pendingSeq[slot] != seq) {
            pendingSeq[slot] = seq;
            seenLanes[slot] = 0;
        }
        seenLanes[slot] |= 1L << lane;
        if ((seenLanes[slot] & lanes) != lanes) {
            return null;
        }
        deliveredSeq[slot] = seq;
        Record rec = new Record(
                seq,
                r.get(NotificationRecord.LONG, NotificationRecord.TAG),
                r.get(NotificationRecord.LONG, NotificationRecord.GENERATION),
                r.get(NotificationRecord.LONG, NotificationRecord.OFFSET),
                r.get(NotificationRecord.LONG, NotificationRecord.LENGTH),
                (r.get(NotificationRecord.INT, NotificationRecord.FLAGS) & NotificationRecord.FLAG_CRC) != 0,
                r.get(NotificationRecord.INT, NotificationRecord.CRC));
        if (!rec.crc()) {
            done(slot, seq, NotificationRecord.VERDICT_NONE, 0);
        }
        return rec;
    }

    /**
     * Writes the verdict of delivered record {@code seq}, which carried a CRC, and frees its slot; a sequence not
     * delivered here, or already judged, is ignored.
     *
     * @param code {@link NotificationRecord#VERDICT_VERIFIED}, {@code _MISMATCH} or {@code _UNCHECKED}
     * @param landedCrc the CRC32C of the bytes in our memory (0 when unchecked)
     */
    synchronized void verdict(long seq, int code, int landedCrc) {
        int slot = (int) (seq % slots);
        if (seq < 0
                || deliveredSeq[slot] != seq
                || doneSeq[slot] == seq
                || !inbox.scope().isAlive()) {
            return;
        }
        done(slot, seq, code, landedCrc);
    }

    /** Caller holds the lock: the verdict word first, then the counter, so a freed slot always has its word. */
    private void done(int slot, long seq, int code, int landedCrc) {
        inbox.set(
                NotificationRecord.LONG,
                NotificationRecord.verdictOffset(slots, slot),
                NotificationRecord.verdict(seq, code, landedCrc));
        doneSeq[slot] = seq;
        while (doneSeq[(int) (consumed % slots)] == consumed) {
            consumed++;
        }
        inbox.set(NotificationRecord.LONG, NotificationRecord.consumedOffset(slots), consumed);
    }

    long length() {
        return inbox.byteSize();
    }

    @Override
    public synchronized void close() {
        registration.close();
        arena.close();
    }
}
