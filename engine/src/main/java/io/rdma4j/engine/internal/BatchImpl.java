package io.rdma4j.engine.internal;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.WriteBatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link WriteBatch}: descriptors in parallel arrays, merged as they are added, with {@link #start} (prefix sums) so
 * that byte {@code k} of the batch, the offset the engine's stripes and chunks count in, maps to its descriptor by
 * binary search. The lane threads read the arrays only while the batch is {@link #inFlight()}, and the caller may
 * change them only while it is not.
 */
final class BatchImpl implements WriteBatch {
    final BufferImpls.Local source;
    final BufferImpls.Remote target;
    final long[] sourceOffset;
    final long[] targetOffset;
    final long[] length;
    /** {@code start[i]}: byte of the batch where descriptor i begins; {@code start[count]} is {@link #bytes}. */
    final long[] start;

    int count;
    private int added;
    private final AtomicBoolean inFlight = new AtomicBoolean();

    BatchImpl(BufferImpls.Local source, BufferImpls.Remote target, int capacity) {
        if (capacity < 1) {
            throw new InvalidArgumentException("a write batch needs a capacity of at least 1, got " + capacity);
        }
        this.source = source;
        this.target = target;
        this.sourceOffset = new long[capacity];
        this.targetOffset = new long[capacity];
        this.length = new long[capacity];
        this.start = new long[capacity + 1];
    }

    @Override
    public WriteBatch add(long sourceOff, long targetOff, long len) {
        idle("add to");
        int index = added;
        if (len < 0) {
            throw new InvalidArgumentException(
                    "descriptor " + index + " of the batch: length must be >= 0, got " + len);
        }
        // the message only when a range is bad: adding a descriptor allocates nothing
        if (!Args.inside(source.length(), sourceOff, len)) {
            Args.range(source.length(), sourceOff, len, "descriptor " + index + " of the batch, source " + source);
        }
        if (!Args.inside(target.length(), targetOff, len)) {
            Args.range(target.length(), targetOff, len, "descriptor " + index + " of the batch, target " + target);
        }
        if (len == 0) {
            added++;
            return this;
        }
        int last = count - 1;
        if (last >= 0
                && sourceOffset[last] + length[last] == sourceOff
                && targetOffset[last] + length[last] == targetOff) {
            length[last] += len;
        } else {
            if (count == length.length) {
                throw new IllegalStateException("the batch is full (" + length.length + " descriptors after merging):"
                        + " write it, or make a larger one with engine.newWriteBatch");
            }
            sourceOffset[count] = sourceOff;
            targetOffset[count] = targetOff;
            length[count] = len;
            count++;
        }
        start[count] = start[count - 1] + length[count - 1];
        added++;
        return this;
    }

    @Override
    public WriteBatch add(long[] sourceOffsets, long[] targetOffsets, long[] lengths, int n) {
        if (n < 0 || sourceOffsets.length < n || targetOffsets.length < n || lengths.length < n) {
            throw new InvalidArgumentException("add(" + n + " descriptors) needs three arrays of at least " + n
                    + " entries, got " + sourceOffsets.length + ", " + targetOffsets.length + " and " + lengths.length);
        }
        for (int i = 0; i < n; i++) {
            add(sourceOffsets[i], targetOffsets[i], lengths[i]);
        }
        return this;
    }

    @Override
    public WriteBatch clear() {
        idle("clear");
        count = 0;
        added = 0;
        return this;
    }

    private void idle(String what) {
        if (inFlight.get()) {
            throw new IllegalStateException("cannot " + what + " a batch whose transfer has not ended:"
                    + " join its transfer first (after a failure, wait until batch.inFlight() is false)");
        }
    }

    /** Claims the batch for a transfer; false when one is already running. */
    boolean acquire() {
        return inFlight.compareAndSet(false, true);
    }

    /** The transfer ended and no write it posted is outstanding: the caller may change the batch again. */
    void release() {
        inFlight.set(false);
    }

    /** {@return the descriptor holding byte {@code k} of the batch} */
    int descriptorAt(long k) {
        int lo = 0;
        int hi = count - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (start[mid] <= k) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    @Override
    public LocalBuffer source() {
        return source;
    }

    @Override
    public RemoteBuffer target() {
        return target;
    }

    @Override
    public int added() {
        return added;
    }

    @Override
    public int descriptors() {
        return count;
    }

    @Override
    public int capacity() {
        return length.length;
    }

    @Override
    public long bytes() {
        return start[count];
    }

    @Override
    public boolean inFlight() {
        return inFlight.get();
    }

    @Override
    public long sourceOffset(int i) {
        return sourceOffset[check(i)];
    }

    @Override
    public long targetOffset(int i) {
        return targetOffset[check(i)];
    }

    @Override
    public long length(int i) {
        return length[check(i)];
    }

    private int check(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("descriptor " + i + " of a batch of " + count);
        }
        return i;
    }

    @Override
    public String toString() {
        return "write batch of " + count + " descriptor(s), " + bytes() + " bytes, " + source + " -> " + target;
    }
}
