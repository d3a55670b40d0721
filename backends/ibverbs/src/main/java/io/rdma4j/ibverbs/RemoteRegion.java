package io.rdma4j.ibverbs;

/**
 * A peer's registered memory as it described it: address, length and rkey. RDMA operations built with it are
 * bounds-checked against {@code length} before posting.
 */
public record RemoteRegion(long address, long length, int rkey) {
    public RemoteRegion {
        if (length < 0) {
            throw new IllegalArgumentException("remote region length is negative: " + length);
        }
    }
}
