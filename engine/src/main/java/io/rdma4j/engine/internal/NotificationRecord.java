package io.rdma4j.engine.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The 64-byte record a notification writes into the target's inbox slot. It is written once per initiator lane that
 * carried data, each time with immediate data {@code inbox << 16 | slot << 8 | lane}; the target delivers when copies
 * from all lanes in {@link #LANES} arrived. Little-endian fields at fixed offsets; the target trusts none of them.
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

    private NotificationRecord() {
    }

    static void write(MemorySegment slot, long seq, long tag, long generation, long offset, long length, boolean crc, int crcValue, long lanes) {
        slot.set(LONG, TAG, tag);
        slot.set(LONG, GENERATION, generation);
        slot.set(LONG, OFFSET, offset);
        slot.set(LONG, LENGTH, length);
        slot.set(INT, CRC, crcValue);
        slot.set(INT, FLAGS, crc ? FLAG_CRC : 0);
        slot.set(LONG, LANES, lanes);
        slot.set(LONG, SEQ, seq);
    }

    static int immediate(int inbox, int slot, int lane) {
        return (inbox << 16) | (slot << 8) | lane;
    }
}
