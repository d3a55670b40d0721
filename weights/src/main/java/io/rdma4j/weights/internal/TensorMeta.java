package io.rdma4j.weights.internal;

import io.rdma4j.weights.DType;
import io.rdma4j.weights.Shard;

/**
 * A tensor as a publisher rank announces it: the full tensor's name, type and shape, and the part this rank holds.
 *
 * @param name the tensor's name
 * @param dtype its element type
 * @param shape the full (unsharded) shape
 * @param held the part the announcing rank holds
 */
public record TensorMeta(String name, DType dtype, long[] shape, Shard held) {
    /** {@return bytes of the part {@code s}} */
    public long bytes(Shard s) {
        long n = dtype.byteSize();
        for (long d : s.shape(shape)) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }
}
