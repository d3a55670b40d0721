package io.rdma4j.weights;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The tensors of the multi-process tests: byte i of tensor t's full image at version v is {@link #value}. */
final class SyncFixture {
    static final String[] NAMES = {"layer0.weight", "layer1.weight"};
    static final DType[] TYPES = {DType.BF16, DType.F32};
    static final long[][] SHAPES = {{64, 1024}, {32, 256}};

    private SyncFixture() {}

    static byte value(long version, int t, long i) {
        return (byte) (i * 31 + t * 7 + version * 13 + (i >>> 9));
    }

    static TransferEngine engine(String name, String directory) {
        return TransferEngine.builder()
                .name(name)
                .backend("libfabric")
                .provider("shm")
                .directory(directory, Security.none())
                // a killed subscriber is known gone once its lease expires
                .lease(java.time.Duration.ofSeconds(3))
                .build();
    }

    /** Fills a trainer rank's part (rows [start, end) of dim 0) with version {@code v}. */
    static void fill(MemorySegment part, long v, int t, Shard held) {
        long row = SHAPES[t][1] * TYPES[t].byteSize();
        long base = held.dim() < 0 ? 0 : held.start() * row;
        for (long j = 0; j < part.byteSize(); j++) {
            part.set(ValueLayout.JAVA_BYTE, j, value(v, t, base + j));
        }
    }

    /** {@return the first byte offset of {@code part} (a 2-d part {@code need}) that differs from version v, or -1} */
    static long check(MemorySegment part, long v, int t, Shard need) {
        long[] shape = SHAPES[t];
        int elem = TYPES[t].byteSize();
        long[][] box = need.box(shape);
        long at = 0;
        for (long r = box[0][0]; r < box[1][0]; r++) {
            for (long c = box[0][1]; c < box[1][1]; c++) {
                long full = (r * shape[1] + c) * elem;
                for (int b = 0; b < elem; b++) {
                    if (part.get(ValueLayout.JAVA_BYTE, at) != value(v, t, full + b)) {
                        return at;
                    }
                    at++;
                }
            }
        }
        return -1;
    }
}
