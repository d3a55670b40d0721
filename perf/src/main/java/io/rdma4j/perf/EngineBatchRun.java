package io.rdma4j.perf;

import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.WriteBatch;
import io.rdma4j.rendezvous.DirectoryServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;

/**
 * {@code ./rdma4j bench engine-batch [--providers shm,tcp] [--seconds 0.4] [--blocks 1000] [--block 4096] [--lanes 4]
 * [--json]}: a KV-cache-shaped move, {@code blocks} blocks scattered in both buffers, as {@link WriteBatch}es to a
 * target engine in another process, next to the same blocks as single engine writes, the raw Java {@code fi_write} loop
 * at the block size and, where {@code RDMA4J_FABTESTS} names a fabtests build, C {@code fi_rma_bw -o writedata} at the
 * block size, all in the same run. Per descriptor it prints the engine's nanoseconds beyond the raw loop's and the
 * bytes allocated by every thread of this process (the initiator's caller, progress and completion threads) during the
 * measured runs, divided by the descriptors moved.
 */
final class EngineBatchRun implements BenchRun {
    private static final int IN_FLIGHT = 4;

    @Override
    public String name() {
        return "engine-batch";
    }

    @Override
    public String summary() {
        return "scattered small blocks as write batches across processes vs single writes, raw Java and C fi_rma_bw";
    }

    @Override
    public int run(String[] args) throws Exception {
        List<String> rest = new ArrayList<>();
        boolean json = false;
        int lanes = 4;
        int blocks = 1000;
        int block = 4096;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--lanes" -> lanes = Integer.parseInt(next(args, i++));
                case "--blocks" -> blocks = Integer.parseInt(next(args, i++));
                case "--block" -> block = Integer.parseInt(next(args, i++));
                default -> rest.add(args[i]);
            }
        }
        long span = EngineWriteRun.BUFFER / IN_FLIGHT;
        if (lanes < 1 || lanes > 16 || blocks < 1 || block < 8 || (long) blocks * block * 2 > span) {
            throw new IllegalArgumentException("need --lanes 1..16, --blocks >= 1, --block >= 8, and blocks x block at"
                    + " most " + span / 2 + " bytes (each of " + IN_FLIGHT + " batches in flight has its own "
                    + span + "-byte region, half of it used so that blocks scatter)");
        }
        rest.add("--sizes");
        rest.add(Integer.toString(block));
        WriteRunOptions o = WriteRunOptions.parse(rest.toArray(String[]::new), new long[] {block});
        long budget = o.budgetNanos();
        Optional<Fabtests> c = Fabtests.fromEnvironment();
        System.out.printf(
                "engine-batch: %d blocks of %s scattered in both buffers, %d batches in flight, to an engine in another"
                        + " process (%d lane(s) per NIC); against single writes of the blocks (%d in flight), the raw"
                        + " Java fi_write loop and %s at %s, in this run; each side's best of %d runs (C's first, then the"
                        + " Java sides' %.1f s runs alternating)%n",
                blocks,
                FabricWriteRun.bytes(block),
                IN_FLIGHT,
                lanes,
                o.window(),
                c.map(f -> "C fabtests " + f.binary()).orElse("no C baseline (set RDMA4J_FABTESTS)"),
                FabricWriteRun.bytes(block),
                EngineWriteRun.ROUNDS,
                o.seconds());
        List<String> rows = new ArrayList<>();
        int failures = 0;
        try (DirectoryServer dir =
                DirectoryServer.builder().bindAddress("127.0.0.1").port(0).start()) {
            for (String provider : o.providers()) {
                // C first, with no engine of this bench alive (their idle progress threads would share its cores)
                Double cRate = null;
                if (c.isPresent()) {
                    try {
                        cRate = c.get()
                                .bestWriteGigabytesPerSecond(
                                        provider, block, o.window(), 100_000, EngineWriteRun.ROUNDS);
                    } catch (IOException e) {
                        failures++;
                        System.out.println("  C baseline failed: " + e.getMessage());
                    }
                }
                try (FabricWriteLoop.Pair pair = new FabricWriteLoop.Pair(provider, EngineWriteRun.BUFFER);
                        EngineWriteRun.RemoteTarget ep = new EngineWriteRun.RemoteTarget(
                                provider, dir.target(), lanes, 1 << 20, Math.max(o.window(), 64))) {
                    WriteBatch[] batches = new WriteBatch[IN_FLIGHT];
                    Random r = new Random(7);
                    for (int k = 0; k < IN_FLIGHT; k++) {
                        batches[k] = ep.initiator.newWriteBatch(ep.source, ep.sink, blocks);
                        scatter(batches[k], r, k * span, span, block, blocks);
                    }
                    measureBatches(ep, batches, budget / 2); // warm
                    ep.measure(block, o.window(), budget / 2);
                    FabricWriteLoop.measure(pair, block, o.window(), 16, budget / 2);
                    double raw = 0;
                    double single = 0;
                    Measured best = null;
                    for (int round = 0; round < EngineWriteRun.ROUNDS; round++) {
                        raw = Math.max(
                                raw,
                                FabricWriteLoop.measure(pair, block, o.window(), 16, budget)
                                        .gigabytesPerSecond());
                        single = Math.max(single, ep.measure(block, o.window(), budget));
                        Measured m = measureBatches(ep, batches, budget);
                        if (best == null || m.gbps > best.gbps) {
                            best = m;
                        }
                    }
                    double nsRaw = block / raw;
                    double nsBatch = block / best.gbps;
                    System.out.printf(
                            Locale.ROOT,
                            "%n%s (%s), %d descriptors per batch after merging%n"
                                    + "  C fi_rma_bw %s: %s GB/s%n"
                                    + "  raw Java loop:     %.3f GB/s, %.0f ns per write%n"
                                    + "  single writes:     %.3f GB/s, %.0f ns per write%n"
                                    + "  write batches:     %.3f GB/s, %.0f ns per descriptor: %.0f ns beyond the raw"
                                    + " loop's, %.1f B allocated per descriptor; %s%n",
                            provider,
                            pair.provider(),
                            batches[0].descriptors(),
                            FabricWriteRun.bytes(block),
                            cRate == null ? "-" : String.format(Locale.ROOT, "%.3f", cRate),
                            raw,
                            nsRaw,
                            single,
                            block / single,
                            best.gbps,
                            nsBatch,
                            nsBatch - nsRaw,
                            best.bytesAllocatedPerDescriptor,
                            cRate == null ? "no C figure" : String.format(Locale.ROOT, "%.2fx C", best.gbps / cRate));
                    rows.add(String.format(
                            Locale.ROOT,
                            "{\"provider\": \"%s\", \"blockBytes\": %d, \"blocks\": %d, \"batchGBps\": %.3f,"
                                    + " \"singleWritesGBps\": %.3f, \"rawJavaGBps\": %.3f, \"fabtestsGBps\": %s,"
                                    + " \"overheadNsPerDescriptor\": %.0f, \"allocatedBytesPerDescriptor\": %.1f}",
                            provider,
                            block,
                            blocks,
                            best.gbps,
                            single,
                            raw,
                            cRate == null ? "null" : String.format(Locale.ROOT, "%.3f", cRate),
                            nsBatch - nsRaw,
                            best.bytesAllocatedPerDescriptor));
                }
            }
        }
        if (json) {
            System.out.println("{\"rows\": [" + String.join(", ", rows) + "]}");
        }
        return failures;
    }

    private static String next(String[] args, int i) {
        if (i + 1 >= args.length) {
            throw new IllegalArgumentException("option " + args[i] + " needs a value");
        }
        return args[i + 1];
    }

    /**
     * Fills {@code b} with {@code blocks} blocks: distinct source and target slots of the region at {@code base} (twice
     * as many slots as blocks, shuffled), so that adjacent pairs, which would merge, are rare.
     */
    static void scatter(WriteBatch b, Random r, long base, long span, int block, int blocks) {
        int slots = (int) Math.min(span / block, 2L * blocks);
        List<Integer> from = new ArrayList<>();
        List<Integer> to = new ArrayList<>();
        for (int i = 0; i < slots; i++) {
            from.add(i);
            to.add(i);
        }
        Collections.shuffle(from, r);
        Collections.shuffle(to, r);
        b.clear();
        for (int i = 0; i < blocks; i++) {
            b.add(base + (long) from.get(i) * block, base + (long) to.get(i) * block, block);
        }
    }

    record Measured(double gbps, double bytesAllocatedPerDescriptor) {}

    /** Rotates the batches, {@code IN_FLIGHT} at a time, until the budget is spent and a final tag landed. */
    static Measured measureBatches(EngineWriteRun.RemoteTarget ep, WriteBatch[] batches, long budgetNanos)
            throws IOException, InterruptedException {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Transfer[] ring = new Transfer[batches.length];
        long bytes = 0;
        long descriptors = 0;
        long allocated0 = threads.getTotalThreadAllocatedBytes();
        long t0 = System.nanoTime();
        long end = t0 + budgetNanos;
        long posted = 0;
        while (posted < batches.length || System.nanoTime() < end) {
            int k = (int) (posted % batches.length);
            if (ring[k] != null) {
                ring[k].join();
            }
            ring[k] = ep.initiator.write(batches[k], TransferOptions.DEFAULT);
            bytes += batches[k].bytes();
            descriptors += batches[k].added();
            posted++;
        }
        for (Transfer t : ring) {
            if (t != null) {
                t.join();
            }
        }
        ep.fence();
        double seconds = (System.nanoTime() - t0) / 1e9;
        long allocated = threads.getTotalThreadAllocatedBytes() - allocated0;
        return new Measured(bytes / seconds / 1e9, allocated / (double) descriptors);
    }
}
