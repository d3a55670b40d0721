package io.rdma4j.rendezvous;

/**
 * What a peer needs to address a registered buffer over one lane of its owner.
 *
 * @param lane the owner's lane index ({@link LaneInfo#index()})
 * @param address the remote address of byte 0 (virtual address, or 0 for offset-addressed providers)
 * @param key the remote key (ibverbs rkey, libfabric {@code fi_mr_key})
 */
public record LaneKey(int lane, long address, long key) {
    public LaneKey {
        if (lane < 0) {
            throw new IllegalArgumentException("lane must be >= 0, got " + lane);
        }
    }
}
