package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * What two RC queue pairs exchange to connect, in the reference Python bindings' 28-byte wire format
 * {@code struct.pack('!IIH16sBB', qp_num, psn, lid, gid, port, mtu)}: network order, no padding. Bytes from a peer are
 * untrusted: {@link #decode} rejects any other length and out-of-range fields.
 *
 * @param qpNum 24-bit queue pair number
 * @param psn 24-bit starting packet sequence number
 * @param lid 16-bit local identifier (0 on RoCE)
 * @param gid 16-byte GID (all zero without GRH)
 * @param port port number, 1-255
 * @param mtu {@code IBV_MTU_256} (1) .. {@code IBV_MTU_4096} (5)
 */
public record QpInfo(int qpNum, int psn, int lid, byte[] gid, int port, int mtu) {
    /** Length of the encoded form. */
    public static final int BYTES = 28;

    public QpInfo {
        if (qpNum < 0 || qpNum > 0xFFFFFF) {
            throw new IllegalArgumentException("QpInfo qp_num " + qpNum + " is not a 24-bit queue pair number");
        }
        if (psn < 0 || psn > 0xFFFFFF) {
            throw new IllegalArgumentException("QpInfo psn " + psn + " is not a 24-bit packet sequence number");
        }
        if (lid < 0 || lid > 0xFFFF) {
            throw new IllegalArgumentException("QpInfo lid " + lid + " is not a 16-bit LID");
        }
        if (gid == null || gid.length != 16) {
            throw new IllegalArgumentException(
                    "QpInfo gid must be 16 bytes, got " + (gid == null ? "null" : gid.length));
        }
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("QpInfo port " + port + " is out of range [1, 255]");
        }
        if (VerbsH.mtuBytes(mtu) < 0) {
            throw new IllegalArgumentException("QpInfo mtu " + mtu + " is not an IBV_MTU_* value (1=256 ... 5=4096)");
        }
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    boolean gidIsZero() {
        for (byte b : gid) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** The 28 bytes of {@code !IIH16sBB}. */
    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.BIG_ENDIAN);
        b.putInt(qpNum)
                .putInt(psn)
                .putShort((short) lid)
                .put(gid)
                .put((byte) port)
                .put((byte) mtu);
        return b.array();
    }

    /** Parses exactly 28 bytes of {@code !IIH16sBB}; anything else is rejected with the reason. */
    public static QpInfo decode(byte[] bytes) {
        if (bytes == null) {
            throw new IllegalArgumentException("QpInfo bytes are null");
        }
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("QpInfo must be exactly " + BYTES + " bytes (!IIH16sBB), got "
                    + bytes.length + ": the peer runs an incompatible version or the message was truncated");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
        long qpn = Integer.toUnsignedLong(b.getInt());
        long psn = Integer.toUnsignedLong(b.getInt());
        int lid = Short.toUnsignedInt(b.getShort());
        byte[] gid = new byte[16];
        b.get(gid);
        int port = Byte.toUnsignedInt(b.get());
        int mtu = Byte.toUnsignedInt(b.get());
        if (qpn > 0xFFFFFF || psn > 0xFFFFFF) {
            throw new IllegalArgumentException(
                    "QpInfo qp_num " + qpn + " / psn " + psn + " do not fit 24 bits: not a QpInfo message");
        }
        return new QpInfo((int) qpn, (int) psn, lid, gid, port, mtu);
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
        return (qpNum * 31 + psn) * 31 + Arrays.hashCode(gid);
    }

    @Override
    public String toString() {
        return "QpInfo{qp_num=" + qpNum + ", psn=" + psn + ", lid=" + lid + ", gid="
                + HexFormat.of().formatHex(gid) + ", port=" + port + ", mtu=" + VerbsH.mtuBytes(mtu) + "}";
    }
}
