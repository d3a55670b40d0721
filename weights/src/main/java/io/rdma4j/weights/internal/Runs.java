package io.rdma4j.weights.internal;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.weights.Shard;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the bytes two holders of parts of one tensor have in common lie in each: runs of contiguous bytes, in groups of
 * equal runs at fixed strides. A holder stores its part in row-major order starting at its base offset.
 */
public final class Runs {
    /**
     * {@code count} runs of {@code length} bytes; run i is at {@code src + i * srcStride} in the source and {@code dst
     * + i * dstStride} in the destination.
     */
    public record Group(long src, long dst, long length, int count, long srcStride, long dstStride) {
        public long bytes() {
            return length * count;
        }
    }

    private Runs() {}

    /**
     * {@return the groups of bytes of the tensor that both the source's and the destination's parts contain}
     *
     * @param shape the full tensor's shape
     * @param elem bytes per element
     * @param src the source's part, stored from {@code srcBase}
     * @param dst the destination's part, stored from {@code dstBase}
     */
    public static List<Group> common(long[] shape, int elem, Shard src, long srcBase, Shard dst, long dstBase) {
        int n = shape.length;
        List<Group> out = new ArrayList<>();
        if (n == 0) {
            out.add(new Group(srcBase, dstBase, elem, 1, 0, 0));
            return out;
        }
        long[][] a = src.box(shape);
        long[][] b = dst.box(shape);
        long[] lo = new long[n];
        long[] hi = new long[n];
        for (int d = 0; d < n; d++) {
            lo[d] = Math.max(a[0][d], b[0][d]);
            hi[d] = Math.min(a[1][d], b[1][d]);
            if (lo[d] >= hi[d]) {
                return out;
            }
        }
        long[] sa = strides(a, elem);
        long[] sb = strides(b, elem);
        // k: the outermost dimension from which on the common box is one contiguous run in both holders
        int k = n - 1;
        while (k > 0 && full(lo, hi, a, b, k)) {
            k--;
        }
        long runLen = (hi[k] - lo[k]) * sa[k];
        if (k == 0) {
            out.add(new Group(srcBase + off(lo, a, sa), dstBase + off(lo, b, sb), runLen, 1, 0, 0));
            return out;
        }
        int g = k - 1;
        long count = hi[g] - lo[g];
        if (count > Integer.MAX_VALUE) {
            throw new InvalidArgumentException("a shard intersection has " + count + " runs along one dimension");
        }
        long[] idx = lo.clone();
        while (true) {
            out.add(new Group(srcBase + off(idx, a, sa), dstBase + off(idx, b, sb), runLen, (int) count, sa[g], sb[g]));
            if (out.size() > (1 << 22)) {
                throw new InvalidArgumentException(
                        "resharding this tensor takes over 4M groups of runs: shard along an outer dimension");
            }
            int d = g - 1;
            while (d >= 0) {
                if (++idx[d] < hi[d]) {
                    break;
                }
                idx[d] = lo[d];
                d--;
            }
            if (d < 0) {
                return out;
            }
        }
    }

    /** Whether dimension {@code d} of the common box spans the whole of both holders' dimension d. */
    private static boolean full(long[] lo, long[] hi, long[][] a, long[][] b, int d) {
        return lo[d] == a[0][d] && hi[d] == a[1][d] && lo[d] == b[0][d] && hi[d] == b[1][d];
    }

    private static long[] strides(long[][] box, int elem) {
        int n = box[0].length;
        long[] s = new long[n];
        long acc = elem;
        for (int d = n - 1; d >= 0; d--) {
            s[d] = acc;
            acc *= box[1][d] - box[0][d];
        }
        return s;
    }

    private static long off(long[] idx, long[][] box, long[] stride) {
        long o = 0;
        for (int d = 0; d < idx.length; d++) {
            o += (idx[d] - box[0][d]) * stride[d];
        }
        return o;
    }
}
