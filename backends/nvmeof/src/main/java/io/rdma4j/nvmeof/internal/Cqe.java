package io.rdma4j.nvmeof.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A completion queue entry (16 bytes): DW0, DW1, SQ head pointer, SQ identifier, command identifier, status field.
 *
 * @param status the 16-bit status field: phase (bit 0), SC (8:1), SCT (11:9), CRD (13:12), MORE (14), DNR (15)
 */
public record Cqe(int dw0, int dw1, int sqhd, int sqid, int cid, int status) {
    public static Cqe parse(byte[] b) {
        if (b.length != 16) {
            throw new IllegalArgumentException("a completion queue entry is 16 bytes, not " + b.length);
        }
        return new Cqe(Le.i32(b, 0), Le.i32(b, 4), Le.u16(b, 8), Le.u16(b, 10), Le.u16(b, 12), Le.u16(b, 14));
    }

    /** Parses the 16 bytes at {@code offset} of a little-endian buffer (a queue's receive buffer). */
    public static Cqe parse(java.nio.ByteBuffer b, int offset) {
        return new Cqe(
                b.getInt(offset),
                b.getInt(offset + 4),
                b.getShort(offset + 8) & 0xffff,
                b.getShort(offset + 10) & 0xffff,
                b.getShort(offset + 12) & 0xffff,
                b.getShort(offset + 14) & 0xffff);
    }

    /** Parses the 16 bytes at {@code offset} of a segment (a registered receive buffer). */
    public static Cqe parse(MemorySegment s, long offset) {
        return new Cqe(
                s.get(I32, offset),
                s.get(I32, offset + 4),
                s.get(U16, offset + 8) & 0xffff,
                s.get(U16, offset + 10) & 0xffff,
                s.get(U16, offset + 12) & 0xffff,
                s.get(U16, offset + 14) & 0xffff);
    }

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** A successful completion synthesised for a C2HData that carried the SUCCESS flag. */
    public static Cqe success(int cid) {
        return new Cqe(0, 0, 0, 0, cid, 0);
    }

    public byte[] encode() {
        byte[] b = new byte[16];
        Le.put32(b, 0, dw0);
        Le.put32(b, 4, dw1);
        Le.put16(b, 8, sqhd);
        Le.put16(b, 10, sqid);
        Le.put16(b, 12, cid);
        Le.put16(b, 14, status);
        return b;
    }

    public int sc() {
        return status >>> 1 & 0xff;
    }

    public int sct() {
        return status >>> 9 & 0x7;
    }

    public boolean dnr() {
        return (status & 0x8000) != 0;
    }

    public boolean ok() {
        return sc() == 0 && sct() == 0;
    }

    /** DW0 and DW1 together (Property Get of an 8-byte property). */
    public long value64() {
        return (dw0 & 0xffffffffL) | (long) dw1 << 32;
    }
}
