package io.rdma4j.nvmeof.rdma;

import io.rdma4j.nvmeof.internal.Le;

/**
 * The RDMA-CM private data of the NVMe/RDMA transport binding (NVMe RDMA Transport Specification, "RDMA_CM_REQUEST",
 * "RDMA_CM_ACCEPT", "RDMA_CM_REJECT"; Linux {@code struct nvme_rdma_cm_req/rep/rej} in {@code linux/nvme-rdma.h}).
 */
public final class RdmaCm {
    /** Bytes of the connect request's private data: RECFMT, QID, HRQSIZE, HSQSIZE, CNTLID and 22 reserved bytes. */
    public static final int REQUEST_SIZE = 32;
    /** Bytes of the accept's private data: RECFMT, CRQSIZE and 28 reserved bytes. */
    public static final int ACCEPT_SIZE = 32;
    /** Bytes of the reject's private data: RECFMT, STS. */
    public static final int REJECT_SIZE = 4;
    /** The only record format defined (1.0). */
    public static final int RECFMT_1_0 = 0;

    private RdmaCm() {}

    /**
     * The connect request's private data.
     *
     * @param qid 0 for the admin queue
     * @param hrqsize host receive queue size: completions the host can take at once
     * @param hsqsize host send queue size, 0's based: commands the host keeps in flight, minus one
     * @param cntlid the controller ID for an I/O queue (from the admin Connect), 0 for the admin queue
     */
    public static byte[] connectRequest(int qid, int hrqsize, int hsqsize, int cntlid) {
        check("QID", qid);
        check("HRQSIZE", hrqsize);
        check("HSQSIZE", hsqsize);
        check("CNTLID", cntlid);
        byte[] b = new byte[REQUEST_SIZE];
        Le.put16(b, 0, RECFMT_1_0);
        Le.put16(b, 2, qid);
        Le.put16(b, 4, hrqsize);
        Le.put16(b, 6, hsqsize);
        Le.put16(b, 8, cntlid);
        return b;
    }

    private static void check(String what, int v) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException(
                    what + " " + v + " does not fit the 16-bit field of the NVMe/RDMA connect request");
        }
    }

    /** @return CRQSIZE of an accept's private data, or -1 when the target sent none (or too little) */
    public static int acceptedQueueSize(byte[] privateData) {
        if (privateData == null || privateData.length < 4 || Le.u16(privateData, 0) != RECFMT_1_0) {
            return -1;
        }
        return Le.u16(privateData, 2);
    }

    /** @return the reject's STS, or -1 when the private data is not an NVMe/RDMA reject (e.g. no listener sent none) */
    public static int rejectStatus(byte[] privateData) {
        if (privateData == null || privateData.length < REJECT_SIZE || Le.u16(privateData, 0) != RECFMT_1_0) {
            return -1;
        }
        return Le.u16(privateData, 2);
    }

    /** @return the name of a reject status, as Linux {@code nvme_rdma_cm_msg} spells it */
    public static String rejectStatusName(int sts) {
        return switch (sts) {
            case 0x01 -> "invalid length (NVME_RDMA_CM_INVALID_LEN)";
            case 0x02 -> "invalid record format (NVME_RDMA_CM_INVALID_RECFMT)";
            case 0x03 -> "invalid queue ID (NVME_RDMA_CM_INVALID_QID)";
            case 0x04 -> "invalid host send queue size (NVME_RDMA_CM_INVALID_HSQSIZE)";
            case 0x05 -> "invalid host receive queue size (NVME_RDMA_CM_INVALID_HRQSIZE)";
            case 0x06 -> "no resources (NVME_RDMA_CM_NO_RSC)";
            case 0x07 -> "invalid IRD (NVME_RDMA_CM_INVALID_IRD)";
            case 0x08 -> "invalid ORD (NVME_RDMA_CM_INVALID_ORD)";
            case 0x09 -> "invalid controller ID (NVME_RDMA_CM_INVALID_CNTLID)";
            default -> "unknown status 0x" + Integer.toHexString(sts);
        };
    }
}
