package io.rdma4j.weights;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.spi.FaultInjectingBackend;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
        return builder(name, directory).build();
    }

    /** As {@link #engine}, its backend wrapped in a fault injector, which goes into {@code faults[0]}. */
    static TransferEngine faultyEngine(String name, String directory, FaultInjectingBackend[] faults) {
        return builder(name, directory)
                .backendWrapper(x -> faults[0] = new FaultInjectingBackend(x))
                .build();
    }

    /** {@return a builder of this fixture's engines: libfabric shm, a 3 s lease} */
    static TransferEngine.Builder builder(String name, String directory) {
        return TransferEngine.builder()
                .name(name)
                .backend("libfabric")
                .provider("shm")
                .directory(directory, Security.none())
                // a killed subscriber is known gone once its lease expires
                .lease(java.time.Duration.ofSeconds(3));
    }

    /**
     * Builds one publisher per engine, rank r holding rows [r/n, (r+1)/n) of every tensor's dim 0 (TP n), in chunks of
     * 16 KiB, rank 0 with CRC32C.
     *
     * @param parts filled with each rank's tensor memory, in {@link #NAMES} order, for {@link #fill}
     */
    static List<WeightPublisher> publishers(
            List<TransferEngine> engines, Arena arena, List<List<MemorySegment>> parts) {
        return publishers(engines, arena, parts, Duration.ofSeconds(20));
    }

    /** As {@link #publishers(List, Arena, List)}, with the publishers' deadline {@code deadline}. */
    static List<WeightPublisher> publishers(
            List<TransferEngine> engines, Arena arena, List<List<MemorySegment>> parts, Duration deadline) {
        int n = engines.size();
        List<WeightPublisher> pubs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            List<Tensor> ts = new ArrayList<>();
            List<MemorySegment> ms = new ArrayList<>();
            for (int t = 0; t < NAMES.length; t++) {
                Shard held = Shard.split(0, SHAPES[t][0], r, n);
                long bytes = Tensor.byteSize(TYPES[t], held.shape(SHAPES[t]));
                MemorySegment m = arena.allocate(bytes, 4096);
                ms.add(m);
                ts.add(Tensor.host(NAMES[t], TYPES[t], held.shape(SHAPES[t]), m));
            }
            parts.add(ms);
            WeightPublisherBuilder b = WeightPublisher.builder(engines.get(r), new TensorSet(ts, Map.of()))
                    .rank(r)
                    .chunkSize(16 << 10)
                    .crc32c(r == 0)
                    .deadline(deadline)
                    .shards(name -> Shard.split(0, SHAPES[List.of(NAMES).indexOf(name)][0], rank, n));
            for (int t = 0; t < NAMES.length; t++) {
                b.fullShape(NAMES[t], SHAPES[t]);
            }
            pubs.add(b.build());
        }
        return pubs;
    }

    /** Fills every rank's part with version {@code v}. */
    static void fillAll(List<List<MemorySegment>> parts, long v) {
        for (int r = 0; r < parts.size(); r++) {
            for (int t = 0; t < NAMES.length; t++) {
                fill(parts.get(r).get(t), v, t, Shard.split(0, SHAPES[t][0], r, parts.size()));
            }
        }
    }

    /**
     * Publishes {@code version} from every publisher at once, each on its own thread as each trainer rank would in its
     * own process.
     *
     * @return each publisher's result, in order
     */
    static List<PublishResult> publishAll(List<WeightPublisher> pubs, long version) throws Exception {
        List<java.util.concurrent.Future<PublishResult>> running = new ArrayList<>();
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(pubs.size())) {
            for (WeightPublisher p : pubs) {
                running.add(pool.submit(() -> p.publish(version)));
            }
        }
        List<PublishResult> results = new ArrayList<>();
        for (var f : running) {
            results.add(f.get());
        }
        return results;
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
