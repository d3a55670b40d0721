package io.rdma4j.rendezvous;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The endpoint bytes of an ibverbs lane: the 28-byte QPInfo record rdma4py exchanges, so JVM and Python peers connect.
 * Network byte order, Python {@code struct} format {@code "!IIH16sBB"}:
 *
 * <pre>
 *   offset  0  u32 qp_num
 *   offset  4  u32 psn
 *   offset  8  u16 lid
 *   offset 10  u8[16] gid
 *   offset 26  u8 port
 *   offset 27  u8 mtu   (enum ibv_mtu: 1=256 ... 5=4096)
 * </pre>
 *
 * Unsigned fields are held in wider Java types and range-checked.
 *
 * @param qpNum queue pair number, 0..2^32-1
 * @param psn initial packet sequence number, 0..2^32-1
 * @param lid local identifier (InfiniBand; 0 on RoCE), 0..65535
 * @param gid the 16-byte global identifier (RoCE, or InfiniBand across subnets)
 * @param port the HCA port number, 0..255
 * @param mtu the path MTU as an {@code enum ibv_mtu} value, 0..255
 */
public record QpInfo(long qpNum, long psn, int lid, byte[] gid, int port, int mtu) {
    /** Encoded size in bytes. */
    public static final int BYTES = 28;
    /** Length of {@link #gid()}. */
    public static final int GID_BYTES = 16;

    public QpInfo {
        checkRange("qpNum", qpNum, 0xFFFF_FFFFL);
        checkRange("psn", psn, 0xFFFF_FFFFL);
        checkRange("lid", lid, 0xFFFF);
        checkRange("port", port, 0xFF);
        checkRange("mtu", mtu, 0xFF);
        if (gid == null || gid.length != GID_BYTES) {
            throw new IllegalArgumentException(
                    "QpInfo gid must be " + GID_BYTES + " bytes, got " + (gid == null ? "null" : gid.length));
        }
        gid = gid.clone();
    }

    private static void checkRange(String what, long value, long max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException("QpInfo " + what + " must be in 0.." + max + ", got " + value);
        }
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** @return the 28 bytes of {@code struct.pack("!IIH16sBB", ...)} */
    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(BYTES); // big-endian by default: network byte order
        b.putInt((int) qpNum)
                .putInt((int) psn)
                .putShort((short) lid)
                .put(gid)
                .put((byte) port)
                .put((byte) mtu);
        return b.array();
    }

    /**
     * Parses endpoint bytes received from a peer.
     *
     * @throws IllegalArgumentException when {@code bytes} is not exactly {@value #BYTES} long
     */
    public static QpInfo decode(byte[] bytes) {
        if (bytes == null || bytes.length != BYTES) {
            throw new IllegalArgumentException("ibverbs endpoint info must be the " + BYTES
                    + "-byte QPInfo (!IIH16sBB), got " + (bytes == null ? "null" : bytes.length + " bytes")
                    + ": the peer runs an incompatible version or sent another backend's endpoint");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long qpNum = Integer.toUnsignedLong(b.getInt());
        long psn = Integer.toUnsignedLong(b.getInt());
        int lid = Short.toUnsignedInt(b.getShort());
        byte[] gid = new byte[GID_BYTES];
        b.get(gid);
        int port = Byte.toUnsignedInt(b.get());
        int mtu = Byte.toUnsignedInt(b.get());
        return new QpInfo(qpNum, psn, lid, gid, port, mtu);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QpInfo q
                && q.qpNum == qpNum
                && q.psn == psn
                && q.lid == lid
                && Arrays.equals(q.gid, gid)
                && q.port == port
                && q.mtu == mtu;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(qpNum) * 31 + Arrays.hashCode(gid);
    }

    @Override
    public String toString() {
        return "QpInfo[qpNum=" + qpNum + ", psn=" + psn + ", lid=" + lid + ", gid="
                + HexFormat.of().formatHex(gid) + ", port=" + port + ", mtu=" + mtu + "]";
    }
}
