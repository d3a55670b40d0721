package io.rdma4j.nvmeof.internal;

/** Little-endian field access on byte arrays: every NVMe and NVMe/TCP structure is little-endian. */
public final class Le {
    private Le() {}

    public static int u8(byte[] b, int off) {
        return b[off] & 0xff;
    }

    public static int u16(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8;
    }

    public static int i32(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    public static long u32(byte[] b, int off) {
        return i32(b, off) & 0xffffffffL;
    }

    public static long i64(byte[] b, int off) {
        return u32(b, off) | (long) i32(b, off + 4) << 32;
    }

    public static void put8(byte[] b, int off, int v) {
        b[off] = (byte) v;
    }

    public static void put16(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
    }

    public static void put32(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
        b[off + 2] = (byte) (v >>> 16);
        b[off + 3] = (byte) (v >>> 24);
    }

    public static void put64(byte[] b, int off, long v) {
        put32(b, off, (int) v);
        put32(b, off + 4, (int) (v >>> 32));
    }

    /** An ASCII field padded with spaces or NULs (serial, model, NQN), trimmed. */
    public static String ascii(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) {
            end++;
        }
        return new String(b, off, end - off, java.nio.charset.StandardCharsets.US_ASCII).strip();
    }

    /** Writes {@code s} as NUL-padded ASCII into {@code [off, off + len)}; fails when it does not fit. */
    public static void putAscii(byte[] b, int off, int len, String s, String what) {
        byte[] a = s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        if (a.length >= len) {
            throw new IllegalArgumentException(
                    what + " '" + s + "' is " + a.length + " bytes; at most " + (len - 1) + " fit");
        }
        System.arraycopy(a, 0, b, off, a.length);
    }
}
