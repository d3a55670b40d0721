package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.Le;

/**
 * What Identify Controller (CNS 01h) reports, with the NVMe over Fabrics fields an initiator needs.
 *
 * @param vendorId PCI vendor ID (VID)
 * @param serial serial number (SN)
 * @param model model number (MN)
 * @param firmware firmware revision (FR)
 * @param mdts maximum data transfer size as a power of two of the minimum memory page size; 0 = no limit
 * @param cntlid controller ID
 * @param version NVMe version (VER), e.g. 0x00010400 for 1.4
 * @param kas keep alive support granularity in 100 ms units; 0 = keep-alive not supported
 * @param maxcmd maximum outstanding commands per queue (0 = not reported)
 * @param namespaces number of namespaces (NN)
 * @param oncs optional NVM command support; bit 3 = Write Zeroes
 * @param vwc volatile write cache (bit 0 = present)
 * @param sgls SGL support
 * @param subsystemNqn NVM subsystem NQN
 * @param ioccsz I/O queue command capsule supported size in 16-byte units (includes the 64-byte SQE)
 * @param iorcsz I/O queue response capsule supported size in 16-byte units
 * @param icdoff in-capsule data offset in 16-byte units
 * @param aerl asynchronous event request limit, 0-based (AERL): the controller takes aerl + 1 outstanding requests
 * @param oaes optional asynchronous events supported (OAES); bit 8 = Namespace Attribute Notices
 */
public record ControllerInfo(
        int vendorId,
        String serial,
        String model,
        String firmware,
        int mdts,
        int cntlid,
        int version,
        int kas,
        int maxcmd,
        long namespaces,
        int oncs,
        int vwc,
        int sgls,
        String subsystemNqn,
        long ioccsz,
        long iorcsz,
        int icdoff,
        int aerl,
        int oaes) {
    /** Identify data is 4096 bytes. */
    public static final int SIZE = 4096;

    public static ControllerInfo parse(byte[] d) {
        if (d.length < SIZE) {
            throw new NvmeProtocolException("Identify Controller data is " + d.length + " bytes; it must be " + SIZE);
        }
        return new ControllerInfo(
                Le.u16(d, 0),
                Le.ascii(d, 4, 20),
                Le.ascii(d, 24, 40),
                Le.ascii(d, 64, 8),
                Le.u8(d, 77),
                Le.u16(d, 78),
                Le.i32(d, 80),
                Le.u16(d, 320),
                Le.u16(d, 514),
                Le.u32(d, 516),
                Le.u16(d, 520),
                Le.u8(d, 525),
                Le.i32(d, 536),
                Le.ascii(d, 768, 256),
                Le.u32(d, 1792),
                Le.u32(d, 1796),
                Le.u16(d, 1800),
                Le.u8(d, 259),
                Le.i32(d, 92));
    }

    /**
     * @return the largest transfer one command may move, given the controller's minimum page size; Long.MAX_VALUE if
     *     unlimited
     */
    public long maxTransferBytes(long minPageSize) {
        return mdts == 0 ? Long.MAX_VALUE : minPageSize << mdts;
    }

    /**
     * @return the most in-capsule data an I/O command may carry (IOCCSZ * 16 - 64), 0 if none; also 0 when ICDOFF asks
     *     for data at an offset into the capsule, which this host does not lay out (it sends such writes by R2T)
     */
    public long inCapsuleDataBytes() {
        return icdoff != 0 ? 0 : Math.max(0, ioccsz * 16 - 64);
    }

    /** @return whether the NVM Write Zeroes command is supported (ONCS bit 3) */
    public boolean supportsWriteZeroes() {
        return (oncs & 0x8) != 0;
    }

    /** @return "1.4" style version */
    public String versionString() {
        int mnr = version >>> 8 & 0xff;
        int ter = version & 0xff;
        return (version >>> 16) + "." + mnr + (ter != 0 ? "." + ter : "");
    }
}
