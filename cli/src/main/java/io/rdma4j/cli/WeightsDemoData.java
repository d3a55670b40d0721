package io.rdma4j.cli;

import io.rdma4j.weights.DType;
import io.rdma4j.weights.Shard;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The generated model of {@code ./rdma4j weights demo}: three 2-d tensors whose every 8-byte word is a function of its
 * offset in the full tensor, the tensor and the version, so that any process can fill or check any part of any version
 * alone. The trainer holds them split in two along dimension 0 (TP 2); even workers need them whole, odd workers need
 * half of dimension 1 (a different split than the trainer's: resharding).
 */
final class WeightsDemoData {
    static final String[] NAMES = {"embed.weight", "layers.0.attn.qkv.weight", "layers.0.mlp.up.weight"};
    static final DType[] TYPES = {DType.BF16, DType.F32, DType.BF16};
    static final long[] COLUMNS = {1024, 512, 2048};

    private WeightsDemoData() {}

    /** {@return the full shape of tensor {@code t} when the model totals about {@code total} bytes} */
    static long[] shape(int t, long total) {
        long rowBytes = COLUMNS[t] * TYPES[t].byteSize();
        long rows = Math.max(2, total / NAMES.length / rowBytes) & ~1L;
        return new long[] {rows, COLUMNS[t]};
    }

    static long word(long version, int t, long offset) {
        long x = (offset + 0x1000_0000_0000L * t) * 0x9E3779B97F4A7C15L + version * 0xBF58476D1CE4E5B9L;
        return x ^ (x >>> 31);
    }

    /** {@return the part of tensor {@code t} that worker {@code worker} needs} */
    static Shard need(int worker, int t, long total) {
        return worker % 2 == 0 ? Shard.FULL : Shard.split(1, shape(t, total)[1], (worker / 2) % 2, 2);
    }

    /** Fills {@code part}, the part {@code shard} of tensor {@code t}, with version {@code v}. */
    static void fill(MemorySegment part, long v, int t, Shard shard, long total) {
        visit(part, t, shard, total, (at, full) -> part.set(ValueLayout.JAVA_LONG_UNALIGNED, at, word(v, t, full)));
    }

    /** {@return the first byte offset in {@code part} that is not version {@code v}, or -1} */
    static long check(MemorySegment part, long v, int t, Shard shard, long total) {
        long[] bad = {-1};
        visit(part, t, shard, total, (at, full) -> {
            if (bad[0] < 0 && part.get(ValueLayout.JAVA_LONG_UNALIGNED, at) != word(v, t, full)) {
                bad[0] = at;
            }
        });
        return bad[0];
    }

    private interface WordVisitor {
        void word(long partOffset, long fullOffset);
    }

    /** Calls {@code f} for each 8-byte word of the 2-d part, with its offset in the part and in the full tensor. */
    private static void visit(MemorySegment part, int t, Shard shard, long total, WordVisitor f) {
        long[] shape = shape(t, total);
        long elem = TYPES[t].byteSize();
        long[][] box = shard.box(shape);
        long at = 0;
        long rowBytes = (box[1][1] - box[0][1]) * elem;
        for (long r = box[0][0]; r < box[1][0]; r++) {
            long full = (r * shape[1] + box[0][1]) * elem;
            for (long b = 0; b < rowBytes; b += 8) {
                f.word(at + b, full + b);
            }
            at += rowBytes;
        }
        if (at != part.byteSize()) {
            throw new IllegalStateException("part of " + part.byteSize() + " bytes where " + at + " were expected");
        }
    }
}
