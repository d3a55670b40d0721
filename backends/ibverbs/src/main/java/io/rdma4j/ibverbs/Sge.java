package io.rdma4j.ibverbs;

/**
 * A scatter/gather element: {@code length} bytes at {@code offset} of a registered region ({@code struct ibv_sge}).
 * Keeping the region lets every post check that it is still registered.
 */
public record Sge(MemoryRegion mr, long offset, int length) {
    /** @return the address the NIC uses */
    public long address() {
        return mr.address() + offset;
    }
}
