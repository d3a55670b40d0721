package io.rdma4j.libfabric;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A peer's registered memory as it was described to us: the address to use in RMA ({@code address} is the region's
 * virtual address with {@code FI_MR_VIRT_ADDR}, 0 with offset addressing), its key, and its length. Every RMA call
 * checks {@code [offset, offset + length)} against {@link #length()} in Java before the provider sees it.
 *
 * <p>Keys are checked by the provider at the target, not here: tcp;ofi_rxm fails a read with a wrong key (an error
 * completion, {@link CompletionErrorException}) and then drops the connection to that peer; a write with a wrong key
 * completes at the initiator before the target looks at the key. shm in libfabric 1.17 does not check keys at all: it
 * reaches the peer's memory by virtual address. Treat a region description as trusted only from a trusted peer.
 *
 * @param address RMA address of the region's first byte
 * @param key remote key ({@code fi_mr_key} at the peer)
 * @param length region length in bytes
 */
public record RemoteRegion(long address, long key, long length) {
    /** Bytes of {@link #toBytes()}: address, key and length, each a little-endian 64-bit value. */
    public static final int ENCODED_SIZE = 24;

    public RemoteRegion {
        if (length <= 0) {
            throw new IllegalArgumentException("remote region length must be positive, was " + length);
        }
        if (address + length - 1 < address && address != 0) {
            throw new IllegalArgumentException("remote region [0x" + Long.toHexString(address) + ", +" + length
                    + ") wraps around the address space");
        }
    }

    /** The RMA address of {@code offset} after checking that {@code [offset, offset + len)} is inside the region. */
    public long addressOf(long offset, long len) {
        if (offset < 0 || len < 0 || offset > length - len) {
            throw new IndexOutOfBoundsException("remote range [" + offset + ", " + offset + " + " + len
                    + ") is past the end of the peer's " + length + "-byte region (key " + key + ")");
        }
        return address + offset;
    }

    /** Encodes for exchange with a peer. */
    public byte[] toBytes() {
        return ByteBuffer.allocate(ENCODED_SIZE)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(address)
                .putLong(key)
                .putLong(length)
                .array();
    }

    /** Decodes what a peer sent; the bytes are untrusted and are checked. */
    public static RemoteRegion fromBytes(byte[] bytes) {
        if (bytes == null || bytes.length != ENCODED_SIZE) {
            throw new IllegalArgumentException("a remote region is encoded in " + ENCODED_SIZE + " bytes, got "
                    + (bytes == null ? "null" : bytes.length));
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        return new RemoteRegion(b.getLong(), b.getLong(), b.getLong());
    }
}
