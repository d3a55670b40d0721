package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import java.util.Arrays;

/**
 * The part of a tensor a rank holds or needs: the indices {@code [start, end)} along dimension {@code dim}, every index
 * of the other dimensions. {@link #FULL} is the whole tensor.
 *
 * @param dim the sharded dimension, or -1 for the whole tensor
 * @param start first index along {@code dim}
 * @param end one past the last index along {@code dim}
 */
public record Shard(int dim, long start, long end) {
    /** The whole tensor. */
    public static final Shard FULL = new Shard(-1, 0, 0);

    /** Checks the range is not inverted. */
    public Shard {
        if (dim < -1 || (dim >= 0 && (start < 0 || end <= start))) {
            throw new InvalidArgumentException("shard dim " + dim + " [" + start + ", " + end
                    + ") is not a range: use dim >= 0 with 0 <= start < end, or Shard.FULL");
        }
    }

    /**
     * {@return part {@code index} of {@code parts} equal parts along {@code dim} of a dimension of size {@code extent}}
     *
     * @param dim the dimension
     * @param extent its size; must be divisible by {@code parts}
     * @param index which part, from 0
     * @param parts how many parts (the tensor-parallel degree)
     */
    public static Shard split(int dim, long extent, int index, int parts) {
        if (parts < 1 || index < 0 || index >= parts || extent % parts != 0) {
            throw new InvalidArgumentException("cannot split extent " + extent + " into " + parts
                    + " equal parts and take part " + index + ": the extent must be divisible by the part count");
        }
        long step = extent / parts;
        return new Shard(dim, index * step, (index + 1) * step);
    }

    /**
     * {@return this shard as a box: per dimension, the first index and one past the last}
     *
     * @param shape the full tensor's shape
     * @throws InvalidArgumentException when the shard's dimension or range lies outside the shape
     */
    public long[][] box(long[] shape) {
        long[] lo = new long[shape.length];
        long[] hi = shape.clone();
        if (dim >= 0) {
            if (dim >= shape.length || end > shape[dim]) {
                throw new InvalidArgumentException(this + " lies outside shape " + Arrays.toString(shape));
            }
            lo[dim] = start;
            hi[dim] = end;
        }
        return new long[][] {lo, hi};
    }

    /** {@return the shape of this part of a tensor of shape {@code shape}} */
    public long[] shape(long[] shape) {
        long[][] b = box(shape);
        long[] s = new long[shape.length];
        for (int i = 0; i < s.length; i++) {
            s[i] = b[1][i] - b[0][i];
        }
        return s;
    }

    @Override
    public String toString() {
        return dim < 0 ? "full" : "dim " + dim + " [" + start + ", " + end + ")";
    }
}
