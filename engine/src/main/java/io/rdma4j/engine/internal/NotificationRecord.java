package io.rdma4j.engine.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The 64-byte record a notification writes into the target's inbox slot. It is written once per initiator lane that
 * carried data, each time with immediate data {@code inbox << 16 | slot << 8 | lane}; the target delivers when copies
 * from all lanes in {@link #LANES} arrived. Little-endian fields at fixed offsets; the target trusts none of them.
 *
 * <p>The inbox is the ring of records, then the 8-byte consumed counter, then one 8-byte verdict word per slot
 * ({@link #verdict}); the writer RDMA-reads the counter for credit and, for a write with a CRC32C, its slot's verdict.
 */
final class NotificationRecord {
    static final int SLOT_BYTES = 64;
    static final int MAX_SLOTS = 256;
    static final int MAX_LANES = 64;
    static final long SEQ = 0;
    static final long TAG = 8;
    static final long GENERATION = 16;
    static final long OFFSET = 24;
    static final long LENGTH = 32;
    static final long CRC = 40;
    static final long FLAGS = 44;
    static final long LANES = 48;
    static final int FLAG_CRC = 1;
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    /** Bytes of the consumed counter after the ring, and of one verdict word per slot after it. */
    static final int COUNTER_BYTES = 8;

    static final int VERDICT_BYTES = 8;
    /** Verdict codes: no check was asked for, the CRC32C matched, it differed, the range was not ours to check. */
    static final int VERDICT_NONE = 0;

    static final int VERDICT_VERIFIED = 1;
    static final int VERDICT_MISMATCH = 2;
    static final int VERDICT_UNCHECKED = 3;
    private static final long VERDICT_SEQ_MASK = (1L << 30) - 1;

    private NotificationRecord() {}

    static void write(
            MemorySegment slot,
            long seq,
            long tag,
            long generation,
            long offset,
            long length,
            boolean crc,
            int crcValue,
            long lanes) {
        slot.set(LONG, TAG, tag);
        slot.set(LONG, GENERATION, generation);
        slot.set(LONG, OFFSET, offset);
        slot.set(LONG, LENGTH, length);
        slot.set(INT, CRC, crcValue);
        slot.set(INT, FLAGS, crc ? FLAG_CRC : 0);
        slot.set(LONG, LANES, lanes);
        slot.set(LONG, SEQ, seq);
    }

    /** {@return bytes of an inbox with {@code slots} records: the ring, the consumed counter, the verdict words} */
    static long inboxBytes(int slots) {
        return (long) slots * (SLOT_BYTES + VERDICT_BYTES) + COUNTER_BYTES;
    }

    /** {@return the slot count of an inbox of {@code bytes}, or -1 when no valid ring has that size} */
    static int slotsOf(long bytes) {
        long body = bytes - COUNTER_BYTES;
        if (body <= 0 || body % (SLOT_BYTES + VERDICT_BYTES) != 0 || body / (SLOT_BYTES + VERDICT_BYTES) > MAX_SLOTS) {
            return -1;
        }
        return (int) (body / (SLOT_BYTES + VERDICT_BYTES));
    }

    static long consumedOffset(int slots) {
        return (long) slots * SLOT_BYTES;
    }

    static long verdictOffset(int slots, int slot) {
        return (long) slots * SLOT_BYTES + COUNTER_BYTES + (long) slot * VERDICT_BYTES;
    }

    /**
     * The word the target writes into a slot's verdict word once it delivered (and, with a CRC, checked) the record of
     * {@code seq}: the low 30 bits of the sequence, a 2-bit code and the CRC32C that landed, in one 8-byte word so that
     * one RDMA read can never see half of it. Thirty bits tell our sequence from the slot's previous one (at most
     * {@link #MAX_SLOTS} behind: the target writes a word for every record, checked or not, so the word never lags by
     * more than one lap).
     */
    static long verdict(long seq, int code, int landedCrc) {
        return (seq & VERDICT_SEQ_MASK) << 34 | (long) (code & 3) << 32 | Integer.toUnsignedLong(landedCrc);
    }

    /** {@return whether verdict word {@code word} was written for {@code seq}} */
    static boolean verdictFor(long word, long seq) {
        return word >>> 34 == (seq & VERDICT_SEQ_MASK);
    }

    static int verdictCode(long word) {
        return (int) (word >>> 32) & 3;
    }

    static int verdictCrc(long word) {
        return (int) word;
    }

    static int immediate(int inbox, int slot, int lane) {
        return (inbox << 16) | (slot << 8) | lane;
    }
}
