package io.rdma4j.nvmeof.tcp;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * One NVMe/TCP PDU (NVMe/TCP Transport Specification, section 3.6). Data-bearing PDUs hold their data as a byte array;
 * digests, padding and the common header's lengths are the codec's business ({@link PduCodec}). These records are the
 * cold path (the ICReq/ICResp exchange, tests, captures); {@link TcpQueue}'s data path builds and parses the same
 * headers with {@link PduCodec}'s buffer primitives and never copies data into a record.
 */
public sealed interface Pdu {
    /** PDU types (common header byte 0). */
    int IC_REQ = 0x00,
            IC_RESP = 0x01,
            H2C_TERM_REQ = 0x02,
            C2H_TERM_REQ = 0x03,
            CAPSULE_CMD = 0x04,
            CAPSULE_RESP = 0x05,
            H2C_DATA = 0x06,
            C2H_DATA = 0x07,
            R2T = 0x09;

    /** Common header flags. */
    int FLAG_HDGST = 0x01, FLAG_DDGST = 0x02, FLAG_LAST_PDU = 0x04, FLAG_SUCCESS = 0x08;

    /** @return the PDU type, one of the constants above */
    int type();

    /** @return the length of the PDU-specific header including the 8-byte common header (HLEN) */
    default int headerLength() {
        return headerLength(type());
    }

    /** @return the fixed HLEN of a PDU type, or -1 for an unknown type */
    static int headerLength(int type) {
        return switch (type) {
            case IC_REQ, IC_RESP -> 128;
            case H2C_TERM_REQ, C2H_TERM_REQ, CAPSULE_RESP, H2C_DATA, C2H_DATA, R2T -> 24;
            case CAPSULE_CMD -> 72;
            default -> -1;
        };
    }

    /** @return a readable name of a PDU type, also for unknown values */
    static String typeName(int type) {
        return switch (type) {
            case IC_REQ -> "ICReq";
            case IC_RESP -> "ICResp";
            case H2C_TERM_REQ -> "H2CTermReq";
            case C2H_TERM_REQ -> "C2HTermReq";
            case CAPSULE_CMD -> "CapsuleCmd";
            case CAPSULE_RESP -> "CapsuleResp";
            case H2C_DATA -> "H2CData";
            case C2H_DATA -> "C2HData";
            case R2T -> "R2T";
            default -> String.format("unknown PDU type 0x%02x", type);
        };
    }

    /**
     * Initialize Connection Request.
     *
     * @param pfv PDU format version (0)
     * @param hpda host PDU data alignment, 0-based in dwords: data in controller-to-host PDUs starts at a multiple of
     *     (hpda+1)*4
     * @param maxr2t maximum outstanding R2Ts per command, 0-based
     */
    record IcReq(int pfv, int hpda, boolean headerDigest, boolean dataDigest, long maxr2t) implements Pdu {
        public int type() {
            return IC_REQ;
        }
    }

    /**
     * Initialize Connection Response.
     *
     * @param cpda controller PDU data alignment, 0-based in dwords, for host-to-controller PDUs with data
     * @param maxH2CData largest H2CData payload the controller accepts, in bytes
     */
    record IcResp(int pfv, int cpda, boolean headerDigest, boolean dataDigest, long maxH2CData) implements Pdu {
        public int type() {
            return IC_RESP;
        }
    }

    /**
     * H2CTermReq or C2HTermReq: a fatal transport error; the sender closes the connection after it.
     *
     * @param fes fatal error status (1 invalid header field, 2 PDU sequence error, 3 header digest error, 4 data
     *     transfer out of range, 5 data transfer limit exceeded, 6 unsupported parameter)
     * @param fei fatal error information (offset of the bad field, for FES 1)
     * @param data the header of the PDU that caused it (at most 128 bytes)
     */
    record TermReq(boolean fromController, int fes, long fei, byte[] data) implements Pdu {
        public int type() {
            return fromController ? C2H_TERM_REQ : H2C_TERM_REQ;
        }

        /** @return the spec's name of {@link #fes()} */
        public String fesName() {
            return switch (fes) {
                case 1 -> "Invalid PDU Header Field";
                case 2 -> "PDU Sequence Error";
                case 3 -> "Header Digest Error";
                case 4 -> "Data Transfer Out of Range";
                case 5 -> "Data Transfer Limit Exceeded";
                case 6 -> "Unsupported Parameter";
                default -> String.format("unknown fatal error status 0x%x", fes);
            };
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof TermReq t
                    && t.fromController == fromController
                    && t.fes == fes
                    && t.fei == fei
                    && Arrays.equals(t.data, data);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(data) * 31 + fes;
        }

        @Override
        public String toString() {
            return Pdu.typeName(type()) + "[fes=" + fes + " (" + fesName() + "), fei=" + fei + ", data="
                    + HexFormat.of().formatHex(data) + "]";
        }
    }

    /**
     * Command capsule: a 64-byte submission queue entry and optional in-capsule data.
     *
     * @param sqe the submission queue entry, exactly 64 bytes
     * @param data in-capsule data, empty when none
     */
    record CapsuleCmd(byte[] sqe, byte[] data) implements Pdu {
        public CapsuleCmd {
            if (sqe.length != 64) {
                throw new IllegalArgumentException("a submission queue entry is 64 bytes, not " + sqe.length);
            }
        }

        public int type() {
            return CAPSULE_CMD;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof CapsuleCmd c && Arrays.equals(c.sqe, sqe) && Arrays.equals(c.data, data);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(sqe);
        }

        @Override
        public String toString() {
            return "CapsuleCmd[sqe=" + HexFormat.of().formatHex(sqe) + ", data=" + data.length + " bytes]";
        }
    }

    /** Response capsule: a 16-byte completion queue entry. */
    record CapsuleResp(byte[] cqe) implements Pdu {
        public CapsuleResp {
            if (cqe.length != 16) {
                throw new IllegalArgumentException("a completion queue entry is 16 bytes, not " + cqe.length);
            }
        }

        public int type() {
            return CAPSULE_RESP;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof CapsuleResp c && Arrays.equals(c.cqe, cqe);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(cqe);
        }

        @Override
        public String toString() {
            return "CapsuleResp[cqe=" + HexFormat.of().formatHex(cqe) + "]";
        }
    }

    /**
     * Host-to-controller data, answering an R2T.
     *
     * @param cccid command capsule CID
     * @param ttag transfer tag from the R2T
     * @param datao offset of this data within the command's data
     */
    record H2CData(int cccid, int ttag, long datao, boolean last, byte[] data) implements Pdu {
        public int type() {
            return H2C_DATA;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof H2CData h
                    && h.cccid == cccid
                    && h.ttag == ttag
                    && h.datao == datao
                    && h.last == last
                    && Arrays.equals(h.data, data);
        }

        @Override
        public int hashCode() {
            return cccid * 31 + (int) datao;
        }

        @Override
        public String toString() {
            return "H2CData[cccid=" + cccid + ", ttag=" + ttag + ", datao=" + datao + ", datal=" + data.length
                    + ", last=" + last + "]";
        }
    }

    /**
     * Controller-to-host data for a read.
     *
     * @param success the controller completed the command successfully and sends no CapsuleResp (only with last)
     */
    record C2HData(int cccid, long datao, boolean last, boolean success, byte[] data) implements Pdu {
        public int type() {
            return C2H_DATA;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof C2HData c
                    && c.cccid == cccid
                    && c.datao == datao
                    && c.last == last
                    && c.success == success
                    && Arrays.equals(c.data, data);
        }

        @Override
        public int hashCode() {
            return cccid * 31 + (int) datao;
        }

        @Override
        public String toString() {
            return "C2HData[cccid=" + cccid + ", datao=" + datao + ", datal=" + data.length + ", last=" + last
                    + ", success=" + success + "]";
        }
    }

    /** Ready to Transfer: the controller asks for {@code r2tl} bytes of a write's data from offset {@code r2to}. */
    record R2T(int cccid, int ttag, long r2to, long r2tl) implements Pdu {
        public int type() {
            return R2T;
        }
    }
}
