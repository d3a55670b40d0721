package io.rdma4j.perf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * {@code ./rdma4j bench fabric-write [--providers shm,tcp] [--seconds 0.4] [--window 64]}: the raw libfabric write
 * baseline, sizes 8 B to 16 MiB, GB/s and writes/s per size and provider, printed next to memcpy of the same size
 * measured in the same run (the ceiling a copy-based transport such as shm can reach).
 */
final class FabricWriteRun implements BenchRun {
    static final long[] SIZES = {8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};

    @Override
    public String name() {
        return "fabric-write";
    }

    @Override
    public String summary() {
        return "raw libfabric fi_write bandwidth and message rate, 8 B to 16 MiB, shm and tcp, vs memcpy";
    }

    @Override
    public int run(String[] args) throws Exception {
        WriteRunOptions o = WriteRunOptions.parse(args, SIZES);
        List<String> providers = o.providers();
        double seconds = o.seconds();
        int window = o.window();
        long[] sizes = o.sizes();
        long budget = o.budgetNanos();
        long bufferSize = 64L << 20;
        System.out.printf(
                "fabric-write: fi_write of each size, %d in flight (fewer when %d of them exceed 64 MiB), %.1f s per point;"
                        + " baseline: memcpy of the same size in this process%n",
                window, window, seconds);
        double[] memcpy = new double[sizes.length];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment a = arena.allocate(16 << 20, 4096);
            MemorySegment b = arena.allocate(16 << 20, 4096);
            for (int round = 0;
                    round < 2;
                    round++) { // the first round runs while the JIT is still compiling the copy loop
                for (int i = 0; i < sizes.length; i++) {
                    memcpy[i] = FabricWriteLoop.memcpyGigabytesPerSecond(a, b, sizes[i], budget / 4);
                }
            }
        }
        for (String provider : providers) {
            try (FabricWriteLoop.Pair pair = new FabricWriteLoop.Pair(provider, bufferSize)) {
                System.out.printf(
                        "%n%s (%s)%n  %10s %10s %14s %12s %14s%n",
                        provider, pair.provider(), "size", "GB/s", "writes/s", "memcpy GB/s", "of memcpy");
                FabricWriteLoop.measure(pair, 4096, window, 1000, budget / 4); // warm up the JIT and the provider
                for (int i = 0; i < sizes.length; i++) {
                    long size = sizes[i];
                    FabricWriteLoop.Result r = FabricWriteLoop.measure(pair, size, window, 16, budget);
                    System.out.printf(
                            "  %10s %10.3f %14.0f %12.2f %13.1f%%%n",
                            bytes(size),
                            r.gigabytesPerSecond(),
                            r.messagesPerSecond(),
                            memcpy[i],
                            100 * r.gigabytesPerSecond() / memcpy[i]);
                }
            }
        }
        return 0;
    }

    static String bytes(long n) {
        return n >= 1 << 20 ? (n >> 20) + " MiB" : n >= 1 << 10 ? (n >> 10) + " KiB" : n + " B";
    }
}
