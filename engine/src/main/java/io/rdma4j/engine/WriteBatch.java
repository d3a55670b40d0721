package io.rdma4j.engine;

/**
 * Many writes between the same two buffers, moved as one transfer: descriptors of source offset, target offset and
 * length, as a KV-cache block move scatters them in both buffers. Made by {@link TransferEngine#newWriteBatch}, filled
 * with {@link #add}, started with {@link TransferEngine#write(WriteBatch, TransferOptions)} and reused with
 * {@link #clear()} once that transfer has ended: the batch holds its descriptors in arrays of a fixed capacity, so
 * filling and moving it allocate nothing per descriptor.
 *
 * <p>A descriptor that continues the previous one in both buffers is merged into it as it is added, so adjacent blocks
 * go out as one larger write. Where the backend takes vectored writes (libfabric's {@code fi_writemsg}; ibverbs chains
 * of RDMA writes), a lane sends several scattered descriptors as one operation with one completion, within the
 * backend's limits on pieces and bytes. Every range is checked as it is added. A batch is not thread-safe: one thread
 * fills it.
 */
public interface WriteBatch {
    /**
     * Adds one write of {@code length} bytes from {@code source} at {@code sourceOffset} to {@code target} at
     * {@code targetOffset}; a zero length adds nothing.
     *
     * @return this batch
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer or the length is negative; the
     *     message names the descriptor's index, and the batch is unchanged
     * @throws IllegalStateException when the batch is full or its transfer has not ended
     */
    WriteBatch add(long sourceOffset, long targetOffset, long length);

    /**
     * Adds {@code count} descriptors from three arrays, as {@link #add} would one by one.
     *
     * @return this batch
     * @throws io.rdma4j.InvalidArgumentException when an array is shorter than {@code count} or a range is bad; the
     *     descriptors before the bad one stay added
     * @throws IllegalStateException when the batch fills up or its transfer has not ended
     */
    WriteBatch add(long[] sourceOffsets, long[] targetOffsets, long[] lengths, int count);

    /**
     * Empties the batch for reuse.
     *
     * @return this batch
     * @throws IllegalStateException when its transfer has not ended
     */
    WriteBatch clear();

    /** {@return the buffer every descriptor reads from} */
    LocalBuffer source();

    /** {@return the peer's buffer every descriptor writes to} */
    RemoteBuffer target();

    /** {@return descriptors added since the last clear, before merging} */
    int added();

    /** {@return descriptors the batch holds after merging adjacent ones: its writes, before chunking and gathering} */
    int descriptors();

    /** {@return descriptors it can hold} */
    int capacity();

    /** {@return bytes of all descriptors} */
    long bytes();

    /**
     * {@return whether a transfer of this batch has not ended yet}: after a failure, until the network has returned
     * every write it posted, so that no write still posted can read a descriptor the caller changed
     */
    boolean inFlight();

    /** {@return source offset of descriptor {@code i} (after merging)} */
    long sourceOffset(int i);

    /** {@return target offset of descriptor {@code i} (after merging)} */
    long targetOffset(int i);

    /** {@return length of descriptor {@code i} (after merging)} */
    long length(int i);
}
