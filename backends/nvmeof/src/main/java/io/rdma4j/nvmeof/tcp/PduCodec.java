package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Le;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Encodes and decodes NVMe/TCP PDUs: common header, PDU-specific header, header digest, padding to the data alignment,
 * data and data digest. The header primitives ({@link #finishHeader}, {@link #checkCommonHeader(ByteBuffer, Settings,
 * int, Header)}, {@link #checkHeaderDigest}) work on a caller's reused buffer and allocate nothing: {@link TcpQueue}
 * builds and parses every PDU with them while the data stays in the caller's memory; the record codec ({@link #encode},
 * {@link #decode}) is built on the same primitives, so the golden-byte tests check the data path's own header code.
 * Decoding treats the bytes as untrusted: every length, offset, flag and digest is checked and a violation is an
 * {@link NvmeProtocolException} naming the field.
 */
public final class PduCodec {
    /** Size of the common header (type, flags, hlen, pdo, plen). */
    public static final int COMMON_HEADER = 8;
    /** Largest data a TermReq carries (the offending PDU's header). */
    public static final int MAX_TERM_DATA = 128;

    private PduCodec() {}

    /**
     * What the two sides agreed in the ICReq/ICResp exchange, seen from one direction.
     *
     * @param headerDigest header digests are on
     * @param dataDigest data digests are on
     * @param pda data alignment of data-bearing PDUs in this direction, 0-based in dwords (CPDA host-to-controller,
     *     HPDA controller-to-host)
     */
    public record Settings(boolean headerDigest, boolean dataDigest, int pda) {
        /** Before the connection is initialized: no digests, no alignment. */
        public static final Settings INITIAL = new Settings(false, false, 0);

        public Settings {
            if (pda < 0 || pda > 31) {
                throw new IllegalArgumentException("PDU data alignment " + pda + " is outside 0..31");
            }
        }

        int headerDigestLength() {
            return headerDigest ? 4 : 0;
        }
    }

    /** CRC32C of {@code [off, off + len)}, as NVMe/TCP digests carry it. */
    public static int crc32c(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /** CRC32C of {@code b}'s remaining bytes with a reused {@code crc}; {@code b}'s position is left where it was. */
    public static int crc32c(CRC32C crc, ByteBuffer b) {
        int p = b.position();
        crc.reset();
        crc.update(b);
        b.position(p);
        return (int) crc.getValue();
    }

    private static boolean carriesDigests(int type) {
        return type != Pdu.IC_REQ && type != Pdu.IC_RESP && type != Pdu.H2C_TERM_REQ && type != Pdu.C2H_TERM_REQ;
    }

    /**
     * Completes a PDU header whose PDU-specific fields (bytes 8 to HLEN) the caller has put into {@code b}: writes the
     * common header, the header digest and the padding up to the data, and leaves {@code b} at position 0 with its
     * limit where the data starts (or at PLEN when there is none). The data and its digest follow in the caller's own
     * buffers, so data never passes through this buffer. Shared by the record encoder ({@link #encode}) and the queue's
     * data path.
     *
     * @param b little-endian, at least PDO bytes (HLEN + 4 + alignment padding, at most 256)
     * @param flags PDU-specific flags (LAST_PDU, SUCCESS); the digest flags are set here
     * @param dataLength bytes of data that follow (0: none)
     * @param crc reused for the header digest
     * @return PLEN
     */
    public static int finishHeader(ByteBuffer b, int type, int flags, int dataLength, Settings s, CRC32C crc) {
        int hlen = Pdu.headerLength(type);
        boolean digests = carriesDigests(type);
        int hd = digests && s.headerDigest ? 4 : 0;
        boolean dd = digests && s.dataDigest && dataLength > 0;
        int dataStart = hlen + hd;
        int pdo = 0;
        if (dataLength > 0 && digests) {
            int align = (s.pda + 1) * 4;
            pdo = (dataStart + align - 1) / align * align;
            dataStart = pdo;
        }
        long plenL = (long) dataStart + dataLength + (dd ? 4 : 0);
        if (plenL > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("PDU of " + plenL + " bytes is too large");
        }
        b.limit(b.capacity());
        b.put(0, (byte) type);
        b.put(1, (byte) (flags | (hd > 0 ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0)));
        b.put(2, (byte) hlen);
        b.put(3, (byte) pdo);
        b.putInt(4, (int) plenL);
        if (hd > 0) {
            b.position(0).limit(hlen);
            crc.reset();
            crc.update(b);
            b.limit(b.capacity());
            b.putInt(hlen, (int) crc.getValue());
        }
        for (int i = hlen + hd; i < dataStart; i++) {
            b.put(i, (byte) 0);
        }
        b.position(0).limit(dataStart);
        return (int) plenL;
    }

    /**
     * Encodes {@code pdu} into a new array of exactly PLEN bytes (the cold path: tests, the ICReq, the scripted peer).
     */
    public static byte[] encode(Pdu pdu, Settings s) {
        int type = pdu.type();
        byte[] data = switch (pdu) {
            case Pdu.CapsuleCmd c -> c.data();
            case Pdu.H2CData h -> h.data();
            case Pdu.C2HData c -> c.data();
            case Pdu.TermReq t -> t.data();
            default -> new byte[0];
        };
        if (pdu instanceof Pdu.TermReq && data.length > MAX_TERM_DATA) {
            throw new IllegalArgumentException("a TermReq carries at most " + MAX_TERM_DATA
                    + " bytes of the offending header, not " + data.length);
        }
        ByteBuffer h = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        int flags = 0;
        switch (pdu) {
            case Pdu.IcReq r -> {
                h.putShort(8, (short) r.pfv());
                h.put(10, (byte) r.hpda());
                h.put(11, (byte) ((r.headerDigest() ? 1 : 0) | (r.dataDigest() ? 2 : 0)));
                h.putInt(12, (int) r.maxr2t());
            }
            case Pdu.IcResp r -> {
                h.putShort(8, (short) r.pfv());
                h.put(10, (byte) r.cpda());
                h.put(11, (byte) ((r.headerDigest() ? 1 : 0) | (r.dataDigest() ? 2 : 0)));
                h.putInt(12, (int) r.maxH2CData());
            }
            case Pdu.TermReq t -> {
                h.putShort(8, (short) t.fes());
                h.putInt(10, (int) t.fei());
            }
            case Pdu.CapsuleCmd c -> h.put(8, c.sqe());
            case Pdu.CapsuleResp c -> h.put(8, c.cqe());
            case Pdu.H2CData d -> {
                h.putShort(8, (short) d.cccid());
                h.putShort(10, (short) d.ttag());
                h.putInt(12, (int) d.datao());
                h.putInt(16, data.length);
                flags = d.last() ? Pdu.FLAG_LAST_PDU : 0;
            }
            case Pdu.C2HData c -> {
                if (c.success() && !c.last()) {
                    throw new IllegalArgumentException("C2HData SUCCESS needs LAST_PDU");
                }
                h.putShort(8, (short) c.cccid());
                h.putInt(12, (int) c.datao());
                h.putInt(16, data.length);
                flags = (c.last() ? Pdu.FLAG_LAST_PDU : 0) | (c.success() ? Pdu.FLAG_SUCCESS : 0);
            }
            case Pdu.R2T r -> {
                h.putShort(8, (short) r.cccid());
                h.putShort(10, (short) r.ttag());
                h.putInt(12, (int) r.r2to());
                h.putInt(16, (int) r.r2tl());
            }
        }
        CRC32C crc = new CRC32C();
        int plen = finishHeader(h, type, flags, data.length, s, crc);
        int dataStart = h.limit();
        byte[] b = new byte[plen];
        h.get(0, b, 0, dataStart);
        System.arraycopy(data, 0, b, dataStart, data.length);
        if ((b[1] & Pdu.FLAG_DDGST) != 0) {
            Le.put32(b, dataStart + data.length, crc32c(data, 0, data.length));
        }
        return b;
    }

    /**
     * The validated common header of a PDU whose first 8 bytes have arrived. Mutable, so a queue parses every PDU into
     * one instance of its own.
     */
    public static final class Header {
        private int type, flags, hlen, pdo, plen, dataOffset, dataLength;
        private boolean dataDigest;

        public int type() {
            return type;
        }

        public int flags() {
            return flags;
        }

        public int hlen() {
            return hlen;
        }

        public int pdo() {
            return pdo;
        }

        public int plen() {
            return plen;
        }

        /** @return where data starts in the PDU (PDO, or HLEN for a TermReq), meaningful when dataLength > 0 */
        public int dataOffset() {
            return dataOffset;
        }

        public int dataLength() {
            return dataLength;
        }

        public boolean dataDigest() {
            return dataDigest;
        }

        /** @return the bytes of the PDU before its data: PDO for a data PDU, else PLEN (a TermReq's data included) */
        public int headerEnd() {
            return (type == Pdu.C2H_DATA || type == Pdu.H2C_DATA || type == Pdu.CAPSULE_CMD) && dataLength > 0
                    ? dataOffset
                    : plen;
        }

        private Header set(
                int type, int flags, int hlen, int pdo, int plen, int dataOffset, int dataLength, boolean dataDigest) {
            this.type = type;
            this.flags = flags;
            this.hlen = hlen;
            this.pdo = pdo;
            this.plen = plen;
            this.dataOffset = dataOffset;
            this.dataLength = dataLength;
            this.dataDigest = dataDigest;
            return this;
        }
    }

    /**
     * Validates a common header before the rest of the PDU is read, so a hostile length never sizes an allocation.
     *
     * @param ch at least the first 8 bytes of the PDU
     * @param s the settings of the direction the PDU travels in
     * @param maxData largest data a PDU of this connection may carry
     */
    public static Header checkCommonHeader(byte[] ch, Settings s, int maxData) {
        return checkCommonHeader(ByteBuffer.wrap(ch).order(ByteOrder.LITTLE_ENDIAN), s, maxData, new Header());
    }

    /**
     * Validates the common header in bytes 0-7 of {@code b} (little-endian) into {@code into}, allocating nothing
     * unless it fails.
     *
     * @return {@code into}
     */
    public static Header checkCommonHeader(ByteBuffer b, Settings s, int maxData, Header into) {
        int type = b.get(0) & 0xff;
        int flags = b.get(1) & 0xff;
        int hlen = b.get(2) & 0xff;
        int pdo = b.get(3) & 0xff;
        long plen = b.getInt(4) & 0xffffffffL;
        int expectedHlen = Pdu.headerLength(type);
        if (expectedHlen < 0) {
            byte[] ch = new byte[COMMON_HEADER];
            b.get(0, ch);
            throw new NvmeProtocolException(String.format(
                    "PDU type 0x%02x is not an NVMe/TCP PDU type (common header %s)",
                    type, java.util.HexFormat.of().formatHex(ch)));
        }
        if (hlen != expectedHlen) {
            throw new NvmeProtocolException(
                    Pdu.typeName(type) + " has HLEN " + hlen + "; the specification fixes it at " + expectedHlen);
        }
        if (plen < hlen) {
            throw new NvmeProtocolException(
                    Pdu.typeName(type) + " has PLEN " + plen + ", shorter than its header (" + hlen + " bytes)");
        }
        if (type == Pdu.IC_REQ || type == Pdu.IC_RESP) {
            if (flags != 0 || pdo != 0 || plen != 128) {
                throw new NvmeProtocolException(
                        Pdu.typeName(type) + " must have FLAGS 0, PDO 0 and PLEN 128; got flags 0x"
                                + Integer.toHexString(flags) + ", PDO " + pdo + ", PLEN " + plen);
            }
            return into.set(type, flags, hlen, pdo, 128, hlen, 0, false);
        }
        if (type == Pdu.H2C_TERM_REQ || type == Pdu.C2H_TERM_REQ) {
            if (plen > hlen + MAX_TERM_DATA) {
                throw new NvmeProtocolException(Pdu.typeName(type) + " has PLEN " + plen + "; at most "
                        + (hlen + MAX_TERM_DATA) + " is allowed");
            }
            if (flags != 0 || (pdo != 0 && pdo != hlen)) {
                throw new NvmeProtocolException(Pdu.typeName(type) + " must have FLAGS 0 and PDO 0; got flags 0x"
                        + Integer.toHexString(flags) + ", PDO " + pdo);
            }
            return into.set(type, flags, hlen, pdo, (int) plen, hlen, (int) plen - hlen, false);
        }
        int allowedFlags = Pdu.FLAG_HDGST | Pdu.FLAG_DDGST;
        if (type == Pdu.H2C_DATA) {
            allowedFlags |= Pdu.FLAG_LAST_PDU;
        } else if (type == Pdu.C2H_DATA) {
            allowedFlags |= Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS;
        }
        if ((flags & ~allowedFlags) != 0) {
            throw new NvmeProtocolException(Pdu.typeName(type) + " has flags 0x" + Integer.toHexString(flags)
                    + "; only 0x" + Integer.toHexString(allowedFlags) + " are defined for it");
        }
        if ((flags & Pdu.FLAG_SUCCESS) != 0 && (flags & Pdu.FLAG_LAST_PDU) == 0) {
            throw new NvmeProtocolException("C2HData has the SUCCESS flag without LAST_PDU");
        }
        boolean hdgst = (flags & Pdu.FLAG_HDGST) != 0;
        if (hdgst != s.headerDigest) {
            throw new NvmeProtocolException(Pdu.typeName(type)
                    + (hdgst
                            ? " carries a header digest, but header digests were not negotiated"
                            : " lacks the header digest that was negotiated"));
        }
        int base = hlen + s.headerDigestLength();
        boolean ddgst = (flags & Pdu.FLAG_DDGST) != 0;
        boolean mayCarryData = type == Pdu.CAPSULE_CMD || type == Pdu.H2C_DATA || type == Pdu.C2H_DATA;
        if (plen == base) {
            if (pdo != 0 || ddgst) {
                throw new NvmeProtocolException(Pdu.typeName(type) + " carries no data but has PDO " + pdo
                        + (ddgst ? " and the DDGSTF flag" : ""));
            }
            if (type == Pdu.H2C_DATA || type == Pdu.C2H_DATA) {
                throw new NvmeProtocolException(
                        Pdu.typeName(type) + " carries no data (PLEN " + plen + "); DATAL must be at least 1");
            }
            return into.set(type, flags, hlen, pdo, (int) plen, base, 0, false);
        }
        if (plen < base) {
            throw new NvmeProtocolException(Pdu.typeName(type) + " has PLEN " + plen
                    + ", shorter than its header and header digest (" + base + " bytes)");
        }
        if (!mayCarryData) {
            throw new NvmeProtocolException(
                    Pdu.typeName(type) + " has PLEN " + plen + "; it carries no data, so PLEN must be " + base);
        }
        if (ddgst != s.dataDigest) {
            throw new NvmeProtocolException(Pdu.typeName(type)
                    + (ddgst
                            ? " carries a data digest, but data digests were not negotiated"
                            : " lacks the data digest that was negotiated"));
        }
        int align = (s.pda + 1) * 4;
        if (pdo < base || pdo % align != 0) {
            throw new NvmeProtocolException(
                    Pdu.typeName(type) + " has PDO " + pdo + "; data must start at or after byte " + base
                            + " on a multiple of " + align + " (the negotiated PDU data alignment)");
        }
        long dataLength = plen - pdo - (ddgst ? 4 : 0);
        if (dataLength <= 0) {
            throw new NvmeProtocolException(
                    Pdu.typeName(type) + " has PDO " + pdo + " and PLEN " + plen + ", leaving no room for its data");
        }
        if (dataLength > maxData) {
            throw new NvmeProtocolException(Pdu.typeName(type) + " carries " + dataLength
                    + " bytes of data; this connection allows at most " + maxData);
        }
        return into.set(type, flags, hlen, pdo, (int) plen, pdo, (int) dataLength, ddgst);
    }

    /**
     * Checks the header digest of a PDU whose header {@link #checkCommonHeader} accepted; {@code b} holds its first
     * HLEN + 4 bytes. Allocates nothing unless it fails.
     */
    public static void checkHeaderDigest(ByteBuffer b, Header h, CRC32C crc) {
        if ((h.flags() & Pdu.FLAG_HDGST) == 0) {
            return;
        }
        int limit = b.limit();
        int position = b.position();
        b.position(0).limit(h.hlen());
        crc.reset();
        crc.update(b);
        b.limit(limit).position(position);
        int expected = (int) crc.getValue();
        int got = b.getInt(h.hlen());
        if (expected != got) {
            throw new NvmeProtocolException(String.format(
                    "%s header digest mismatch: received 0x%08x, computed 0x%08x",
                    Pdu.typeName(h.type()), got, expected));
        }
    }

    /** Fails unless {@code expected} (computed over the data as received) matches the data digest {@code got}. */
    public static void checkDataDigest(Header h, int got, int expected) {
        if (expected != got) {
            throw new NvmeProtocolException(String.format(
                    "%s data digest mismatch: received 0x%08x, computed 0x%08x",
                    Pdu.typeName(h.type()), got, expected));
        }
    }

    /** Decodes one complete PDU of exactly PLEN bytes. */
    public static Pdu decode(byte[] b, Settings s, int maxData) {
        if (b.length < COMMON_HEADER) {
            throw new NvmeProtocolException(
                    "truncated PDU: " + b.length + " bytes, shorter than the 8-byte common header");
        }
        Header h = checkCommonHeader(b, s, maxData);
        if (b.length != h.plen()) {
            throw new NvmeProtocolException(
                    Pdu.typeName(h.type()) + " has PLEN " + h.plen() + " but " + b.length + " bytes were given");
        }
        return decodeBody(h, b, s);
    }

    /**
     * Decodes the rest of a PDU whose common header {@link #checkCommonHeader} accepted; {@code b} holds all PLEN
     * bytes.
     */
    public static Pdu decodeBody(Header h, byte[] b, Settings s) {
        int type = h.type();
        String name = Pdu.typeName(type);
        checkHeaderDigest(ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN), h, new CRC32C());
        byte[] data = Arrays.copyOfRange(b, h.dataOffset(), h.dataOffset() + h.dataLength());
        if (h.dataDigest()) {
            checkDataDigest(h, Le.i32(b, h.dataOffset() + h.dataLength()), crc32c(data, 0, data.length));
        }
        boolean last = (h.flags() & Pdu.FLAG_LAST_PDU) != 0;
        return switch (type) {
            case Pdu.IC_REQ -> {
                int dgst = Le.u8(b, 11);
                checkDigestBits(name, dgst);
                yield new Pdu.IcReq(Le.u16(b, 8), Le.u8(b, 10), (dgst & 1) != 0, (dgst & 2) != 0, Le.u32(b, 12));
            }
            case Pdu.IC_RESP -> {
                int dgst = Le.u8(b, 11);
                checkDigestBits(name, dgst);
                yield new Pdu.IcResp(Le.u16(b, 8), Le.u8(b, 10), (dgst & 1) != 0, (dgst & 2) != 0, Le.u32(b, 12));
            }
            case Pdu.H2C_TERM_REQ, Pdu.C2H_TERM_REQ ->
                new Pdu.TermReq(type == Pdu.C2H_TERM_REQ, Le.u16(b, 8), Le.u32(b, 10), data);
            case Pdu.CAPSULE_CMD -> new Pdu.CapsuleCmd(Arrays.copyOfRange(b, 8, 72), data);
            case Pdu.CAPSULE_RESP -> new Pdu.CapsuleResp(Arrays.copyOfRange(b, 8, 24));
            case Pdu.H2C_DATA -> {
                checkDatal(name, Le.u32(b, 16), data.length);
                yield new Pdu.H2CData(Le.u16(b, 8), Le.u16(b, 10), Le.u32(b, 12), last, data);
            }
            case Pdu.C2H_DATA -> {
                checkDatal(name, Le.u32(b, 16), data.length);
                yield new Pdu.C2HData(Le.u16(b, 8), Le.u32(b, 12), last, (h.flags() & Pdu.FLAG_SUCCESS) != 0, data);
            }
            case Pdu.R2T -> {
                long r2tl = Le.u32(b, 16);
                if (r2tl == 0) {
                    throw new NvmeProtocolException("R2T asks for 0 bytes (R2TL 0)");
                }
                yield new Pdu.R2T(Le.u16(b, 8), Le.u16(b, 10), Le.u32(b, 12), r2tl);
            }
            default -> throw new NvmeProtocolException(name + " cannot be decoded");
        };
    }

    private static void checkDigestBits(String name, int dgst) {
        if ((dgst & ~3) != 0) {
            throw new NvmeProtocolException(name + " has DGST 0x" + Integer.toHexString(dgst)
                    + "; only bits 0 (header) and 1 (data) are defined");
        }
    }

    private static void checkDatal(String name, long datal, int actual) {
        if (datal != actual) {
            throw new NvmeProtocolException(name + " has DATAL " + datal + " but carries " + actual + " bytes of data");
        }
    }
}
