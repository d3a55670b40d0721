package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Le;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Encodes and decodes NVMe/TCP PDUs: common header, PDU-specific header, header digest, padding to the data alignment,
 * data and data digest. Decoding treats the bytes as untrusted: every length, offset, flag and digest is checked and a
 * violation is an {@link NvmeProtocolException} naming the field.
 */
public final class PduCodec {
    /** Size of the common header (type, flags, hlen, pdo, plen). */
    public static final int COMMON_HEADER = 8;
    /** Largest data a TermReq carries (the offending PDU's header). */
    public static final int MAX_TERM_DATA = 128;

    private PduCodec() {
    }

    /**
     * What the two sides agreed in the ICReq/ICResp exchange, seen from one direction.
     * @param headerDigest header digests are on
     * @param dataDigest data digests are on
     * @param pda data alignment of data-bearing PDUs in this direction, 0-based in dwords (CPDA host-to-controller,
     *            HPDA controller-to-host)
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

    private static boolean carriesDigests(int type) {
        return type != Pdu.IC_REQ && type != Pdu.IC_RESP && type != Pdu.H2C_TERM_REQ && type != Pdu.C2H_TERM_REQ;
    }

    /** Encodes {@code pdu} into a new array of exactly PLEN bytes. */
    public static byte[] encode(Pdu pdu, Settings s) {
        int type = pdu.type();
        int hlen = pdu.headerLength();
        byte[] data = switch (pdu) {
            case Pdu.CapsuleCmd c -> c.data();
            case Pdu.H2CData h -> h.data();
            case Pdu.C2HData c -> c.data();
            case Pdu.TermReq t -> t.data();
            default -> new byte[0];
        };
        boolean digests = carriesDigests(type);
        int hd = digests && s.headerDigest ? 4 : 0;
        boolean dd = digests && s.dataDigest && data.length > 0;
        int pdo = 0;
        int dataStart = hlen + hd;
        if (data.length > 0 && digests) {
            int align = (s.pda + 1) * 4;
            pdo = (dataStart + align - 1) / align * align;
            dataStart = pdo;
        }
        if (pdu instanceof Pdu.TermReq && data.length > MAX_TERM_DATA) {
            throw new IllegalArgumentException("a TermReq carries at most " + MAX_TERM_DATA + " bytes of the offending header, not " + data.length);
        }
        long plenL = (long) dataStart + data.length + (dd ? 4 : 0);
        if (plenL > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("PDU of " + plenL + " bytes is too large");
        }
        int plen = (int) plenL;
        byte[] b = new byte[plen];
        int flags = (hd > 0 ? Pdu.FLAG_HDGST : 0) | (dd ? Pdu.FLAG_DDGST : 0);
        switch (pdu) {
            case Pdu.IcReq r -> {
                Le.put16(b, 8, r.pfv());
                Le.put8(b, 10, r.hpda());
                Le.put8(b, 11, (r.headerDigest() ? 1 : 0) | (r.dataDigest() ? 2 : 0));
                Le.put32(b, 12, (int) r.maxr2t());
            }
            case Pdu.IcResp r -> {
                Le.put16(b, 8, r.pfv());
                Le.put8(b, 10, r.cpda());
                Le.put8(b, 11, (r.headerDigest() ? 1 : 0) | (r.dataDigest() ? 2 : 0));
                Le.put32(b, 12, (int) r.maxH2CData());
            }
            case Pdu.TermReq t -> {
                Le.put16(b, 8, t.fes());
                Le.put32(b, 10, (int) t.fei());
            }
            case Pdu.CapsuleCmd c -> System.arraycopy(c.sqe(), 0, b, 8, 64);
            case Pdu.CapsuleResp c -> System.arraycopy(c.cqe(), 0, b, 8, 16);
            case Pdu.H2CData h -> {
                Le.put16(b, 8, h.cccid());
                Le.put16(b, 10, h.ttag());
                Le.put32(b, 12, (int) h.datao());
                Le.put32(b, 16, data.length);
                flags |= h.last() ? Pdu.FLAG_LAST_PDU : 0;
            }
            case Pdu.C2HData c -> {
                if (c.success() && !c.last()) {
                    throw new IllegalArgumentException("C2HData SUCCESS needs LAST_PDU");
                }
                Le.put16(b, 8, c.cccid());
                Le.put32(b, 12, (int) c.datao());
                Le.put32(b, 16, data.length);
                flags |= (c.last() ? Pdu.FLAG_LAST_PDU : 0) | (c.success() ? Pdu.FLAG_SUCCESS : 0);
            }
            case Pdu.R2T r -> {
                Le.put16(b, 8, r.cccid());
                Le.put16(b, 10, r.ttag());
                Le.put32(b, 12, (int) r.r2to());
                Le.put32(b, 16, (int) r.r2tl());
            }
        }
        b[0] = (byte) type;
        b[1] = (byte) flags;
        b[2] = (byte) hlen;
        b[3] = (byte) pdo;
        Le.put32(b, 4, plen);
        if (hd > 0) {
            Le.put32(b, hlen, crc32c(b, 0, hlen));
        }
        System.arraycopy(data, 0, b, dataStart, data.length);
        if (dd) {
            Le.put32(b, dataStart + data.length, crc32c(data, 0, data.length));
        }
        return b;
    }

    /**
     * The validated common header of a PDU whose first 8 bytes have arrived.
     * @param dataOffset where data starts in the PDU (PDO, or HLEN for a TermReq), meaningful when dataLength > 0
     */
    public record Header(int type, int flags, int hlen, int pdo, int plen, int dataOffset, int dataLength, boolean dataDigest) {
    }

    /**
     * Validates a common header before the rest of the PDU is read, so a hostile length never sizes an allocation.
     * @param ch at least the first 8 bytes of the PDU
     * @param s the settings of the direction the PDU travels in
     * @param maxData largest data a PDU of this connection may carry
     */
    public static Header checkCommonHeader(byte[] ch, Settings s, int maxData) {
        int type = ch[0] & 0xff;
        int flags = ch[1] & 0xff;
        int hlen = ch[2] & 0xff;
        int pdo = ch[3] & 0xff;
        long plen = Le.u32(ch, 4);
        int expectedHlen = Pdu.headerLength(type);
        if (expectedHlen < 0) {
            throw new NvmeProtocolException(String.format("PDU type 0x%02x is not an NVMe/TCP PDU type (common header %s)", type,
                    java.util.HexFormat.of().formatHex(ch, 0, 8)));
        }
        String name = Pdu.typeName(type);
        if (hlen != expectedHlen) {
            throw new NvmeProtocolException(name + " has HLEN " + hlen + "; the specification fixes it at " + expectedHlen);
        }
        if (plen < hlen) {
            throw new NvmeProtocolException(name + " has PLEN " + plen + ", shorter than its header (" + hlen + " bytes)");
        }
        if (type == Pdu.IC_REQ || type == Pdu.IC_RESP) {
            if (flags != 0 || pdo != 0 || plen != 128) {
                throw new NvmeProtocolException(name + " must have FLAGS 0, PDO 0 and PLEN 128; got flags 0x" + Integer.toHexString(flags)
                        + ", PDO " + pdo + ", PLEN " + plen);
            }
            return new Header(type, flags, hlen, pdo, 128, hlen, 0, false);
        }
        if (type == Pdu.H2C_TERM_REQ || type == Pdu.C2H_TERM_REQ) {
            if (plen > hlen + MAX_TERM_DATA) {
                throw new NvmeProtocolException(name + " has PLEN " + plen + "; at most " + (hlen + MAX_TERM_DATA) + " is allowed");
            }
            if (flags != 0 || (pdo != 0 && pdo != hlen)) {
                throw new NvmeProtocolException(name + " must have FLAGS 0 and PDO 0; got flags 0x" + Integer.toHexString(flags) + ", PDO " + pdo);
            }
            return new Header(type, flags, hlen, pdo, (int) plen, hlen, (int) plen - hlen, false);
        }
        int allowedFlags = Pdu.FLAG_HDGST | Pdu.FLAG_DDGST;
        if (type == Pdu.H2C_DATA) {
            allowedFlags |= Pdu.FLAG_LAST_PDU;
        } else if (type == Pdu.C2H_DATA) {
            allowedFlags |= Pdu.FLAG_LAST_PDU | Pdu.FLAG_SUCCESS;
        }
        if ((flags & ~allowedFlags) != 0) {
            throw new NvmeProtocolException(name + " has flags 0x" + Integer.toHexString(flags) + "; only 0x" + Integer.toHexString(allowedFlags)
                    + " are defined for it");
        }
        if ((flags & Pdu.FLAG_SUCCESS) != 0 && (flags & Pdu.FLAG_LAST_PDU) == 0) {
            throw new NvmeProtocolException("C2HData has the SUCCESS flag without LAST_PDU");
        }
        boolean hdgst = (flags & Pdu.FLAG_HDGST) != 0;
        if (hdgst != s.headerDigest) {
            throw new NvmeProtocolException(name + (hdgst ? " carries a header digest, but header digests were not negotiated"
                    : " lacks the header digest that was negotiated"));
        }
        int base = hlen + s.headerDigestLength();
        boolean ddgst = (flags & Pdu.FLAG_DDGST) != 0;
        boolean mayCarryData = type == Pdu.CAPSULE_CMD || type == Pdu.H2C_DATA || type == Pdu.C2H_DATA;
        if (plen == base) {
            if (pdo != 0 || ddgst) {
                throw new NvmeProtocolException(name + " carries no data but has PDO " + pdo + (ddgst ? " and the DDGSTF flag" : ""));
            }
            if (type == Pdu.H2C_DATA || type == Pdu.C2H_DATA) {
                throw new NvmeProtocolException(name + " carries no data (PLEN " + plen + "); DATAL must be at least 1");
            }
            return new Header(type, flags, hlen, pdo, (int) plen, base, 0, false);
        }
        if (plen < base) {
            throw new NvmeProtocolException(name + " has PLEN " + plen + ", shorter than its header and header digest (" + base + " bytes)");
        }
        if (!mayCarryData) {
            throw new NvmeProtocolException(name + " has PLEN " + plen + "; it carries no data, so PLEN must be " + base);
        }
        if (ddgst != s.dataDigest) {
            throw new NvmeProtocolException(name + (ddgst ? " carries a data digest, but data digests were not negotiated"
                    : " lacks the data digest that was negotiated"));
        }
        int align = (s.pda + 1) * 4;
        if (pdo < base || pdo % align != 0) {
            throw new NvmeProtocolException(name + " has PDO " + pdo + "; data must start at or after byte " + base
                    + " on a multiple of " + align + " (the negotiated PDU data alignment)");
        }
        long dataLength = plen - pdo - (ddgst ? 4 : 0);
        if (dataLength <= 0) {
            throw new NvmeProtocolException(name + " has PDO " + pdo + " and PLEN " + plen + ", leaving no room for its data");
        }
        if (dataLength > maxData) {
            throw new NvmeProtocolException(name + " carries " + dataLength + " bytes of data; this connection allows at most " + maxData);
        }
        return new Header(type, flags, hlen, pdo, (int) plen, pdo, (int) dataLength, ddgst);
    }

    /** Decodes one complete PDU of exactly PLEN bytes. */
    public static Pdu decode(byte[] b, Settings s, int maxData) {
        if (b.length < COMMON_HEADER) {
            throw new NvmeProtocolException("truncated PDU: " + b.length + " bytes, shorter than the 8-byte common header");
        }
        Header h = checkCommonHeader(b, s, maxData);
        if (b.length != h.plen()) {
            throw new NvmeProtocolException(Pdu.typeName(h.type()) + " has PLEN " + h.plen() + " but " + b.length + " bytes were given");
        }
        return decodeBody(h, b, s);
    }

    /** Decodes the rest of a PDU whose common header {@link #checkCommonHeader} accepted; {@code b} holds all PLEN bytes. */
    public static Pdu decodeBody(Header h, byte[] b, Settings s) {
        int type = h.type();
        String name = Pdu.typeName(type);
        if ((h.flags() & Pdu.FLAG_HDGST) != 0) {
            int expected = crc32c(b, 0, h.hlen());
            int got = Le.i32(b, h.hlen());
            if (expected != got) {
                throw new NvmeProtocolException(String.format("%s header digest mismatch: received 0x%08x, computed 0x%08x", name, got, expected));
            }
        }
        byte[] data = Arrays.copyOfRange(b, h.dataOffset(), h.dataOffset() + h.dataLength());
        if (h.dataDigest()) {
            int expected = crc32c(data, 0, data.length);
            int got = Le.i32(b, h.dataOffset() + h.dataLength());
            if (expected != got) {
                throw new NvmeProtocolException(String.format("%s data digest mismatch: received 0x%08x, computed 0x%08x", name, got, expected));
            }
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
            case Pdu.H2C_TERM_REQ, Pdu.C2H_TERM_REQ -> new Pdu.TermReq(type == Pdu.C2H_TERM_REQ, Le.u16(b, 8), Le.u32(b, 10), data);
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
            throw new NvmeProtocolException(name + " has DGST 0x" + Integer.toHexString(dgst) + "; only bits 0 (header) and 1 (data) are defined");
        }
    }

    private static void checkDatal(String name, long datal, int actual) {
        if (datal != actual) {
            throw new NvmeProtocolException(name + " has DATAL " + datal + " but carries " + actual + " bytes of data");
        }
    }
}
