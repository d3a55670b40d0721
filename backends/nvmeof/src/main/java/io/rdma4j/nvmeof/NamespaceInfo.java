package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.Le;

/**
 * What Identify Namespace (CNS 00h) reports about one namespace.
 *
 * @param nsid namespace ID
 * @param blocks size in logical blocks (NSZE)
 * @param capacity capacity in logical blocks (NCAP)
 * @param used blocks in use (NUSE)
 * @param lbaFormat index of the active LBA format (FLBAS)
 * @param blockSize bytes per logical block of the active format
 * @param metadataSize metadata bytes per block of the active format
 */
public record NamespaceInfo(
        long nsid, long blocks, long capacity, long used, int lbaFormat, int blockSize, int metadataSize) {
    public static NamespaceInfo parse(long nsid, byte[] d) {
        if (d.length < 4096) {
            throw new NvmeProtocolException("Identify Namespace data is " + d.length + " bytes; it must be 4096");
        }
        int nlbaf = Le.u8(d, 25);
        int flbas = Le.u8(d, 26);
        int fmt = flbas & 0xf | (flbas >>> 5 & 0x3) << 4;
        if (fmt > nlbaf) {
            throw new NvmeProtocolException(
                    "namespace " + nsid + " selects LBA format " + fmt + " but has only " + (nlbaf + 1));
        }
        int off = 128 + fmt * 4;
        int lbads = Le.u8(d, off + 2);
        long nsze = Le.i64(d, 0);
        if (nsze == 0) {
            throw new NvmeStatusException("Identify Namespace(nsid=" + nsid + ")", false, 0, 0x0b, true, 0);
        }
        if (lbads < 9 || lbads > 24) {
            throw new NvmeProtocolException(
                    "namespace " + nsid + " reports a block size of 2^" + lbads + " bytes; 2^9..2^24 are usable");
        }
        return new NamespaceInfo(nsid, nsze, Le.i64(d, 8), Le.i64(d, 16), fmt, 1 << lbads, Le.u16(d, off));
    }

    /** @return size in bytes */
    public long bytes() {
        return blocks * blockSize;
    }
}
