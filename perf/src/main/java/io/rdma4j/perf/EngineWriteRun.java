package io.rdma4j.perf;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./rdma4j bench engine-write [--providers shm,tcp] [--seconds 2] [--window 64] [--sizes ...] [--lanes 4]
 * [--chunk N] [--threads N] [--spread] [--json]}: transfer-engine write bandwidth across two processes (the target
 * engine in a child process, as the demo runs it), next to two baselines measured in the same run for the same
 * provider, sizes and window:
 *
 * <ul>
 *   <li>C: fabtests' {@code fi_rma_bw -o writedata}, server and client processes ({@link Fabtests}), where
 *       {@code RDMA4J_FABTESTS} names a fabtests build;
 *   <li>the raw Java loop: {@link FabricWriteLoop}'s windowed {@code fi_write}s between two endpoints of this process.
 * </ul>
 *
 * The engine keeps {@code window} writes in flight and its clock stops, like the baselines', when a final notification
 * has landed at the target. Per-operation cost is printed beside bandwidth: the engine's nanoseconds per write minus
 * the raw loop's (negative where striping over lanes beats one endpoint). With {@code --json} the last line is
 * {@code {"rows": [{"provider": ..., "bytes": ..., "engineGBps": ..., "rawJavaGBps": ..., "fabtestsGBps": x|null,
 * "overheadNsPerOp": ...}]}}.
 */
final class EngineWriteRun implements BenchRun {
    static final long[] SIZES = {4 << 10, 64 << 10, 1 << 20, 16 << 20};
    /**
     * Spinning progress threads ({@code -Drdma4j.bench.spin=true}); by default they back off, leaving the CPU to the
     * baseline when idle.
     */
    static final boolean SPIN = Boolean.getBoolean("rdma4j.bench.spin");

    /** Progress threads of each bench engine ({@code --threads}, or {@code -Drdma4j.bench.progressThreads}; 1). */
    static int progressThreads() {
        return Integer.getInteger("rdma4j.bench.progressThreads", 1);
    }

    static final int ROUNDS = 3;
    /**
     * Seconds per measured run unless {@code --seconds} says: at 0.4 s a tcp run at 1 MiB ended while its sockets were
     * still ramping up (the engine gave 3.8-5.2 GB/s in 0.4 s runs and 7.5 in a 4 s run, minutes apart), and the
     * engine's ratio to C moved by up to 0.6 between runs.
     */
    static final double DEFAULT_SECONDS = 2.0;

    static final long BUFFER = 64L << 20;

    /** One row of the result: GB/s of each side at one provider and size. */
    record Row(String provider, long bytes, double engine, double raw, Double fabtests) {
        /** Engine nanoseconds per write beyond the raw loop's: bytes / (GB/s) is nanoseconds. */
        double overheadNsPerOp() {
            return bytes / engine - bytes / raw;
        }

        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"provider\": \"%s\", \"bytes\": %d, \"engineGBps\": %.3f, \"rawJavaGBps\": %.3f,"
                            + " \"fabtestsGBps\": %s, \"overheadNsPerOp\": %.0f}",
                    provider,
                    bytes,
                    engine,
                    raw,
                    fabtests == null ? "null" : String.format(Locale.ROOT, "%.3f", fabtests),
                    overheadNsPerOp());
        }
    }

    @Override
    public String name() {
        return "engine-write";
    }

    @Override
    public String summary() {
        return "engine write bandwidth across two processes vs C fabtests fi_rma_bw and the raw Java fi_write loop";
    }

    @Override
    public int run(String[] args) throws Exception {
        List<String> rest = new ArrayList<>();
        boolean json = false;
        boolean spread = false;
        int lanes = 4;
        long chunk = -1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--spread" -> spread = true;
                case "--lanes" -> lanes = Integer.parseInt(value(args, i++));
                case "--chunk" -> chunk = Long.parseLong(value(args, i++));
                case "--threads" -> System.setProperty("rdma4j.bench.progressThreads", value(args, i++));
                default -> rest.add(args[i]);
            }
        }
        if (lanes < 1 || lanes > 16) {
            throw new IllegalArgumentException("--lanes must be 1 to 16, got " + lanes);
        }
        if (progressThreads() < 1 || progressThreads() > lanes) {
            throw new IllegalArgumentException(
                    "--threads must be 1 to the lane count (" + lanes + "), got " + progressThreads());
        }
        // one lane: one chunk per write up to 16 MiB, so engine and raw loop post the same operations; several lanes:
        // 1 MiB chunks, so a large write is striped over them
        long chunkBytes = chunk > 0 ? chunk : lanes == 1 ? 16 << 20 : 1 << 20;
        WriteRunOptions o = WriteRunOptions.parse(rest.toArray(String[]::new), SIZES, DEFAULT_SECONDS);
        int window = o.window();
        long budget = o.budgetNanos();
        // fabtests writes every operation from one buffer to one remote address; the Java sides do the same unless
        // --spread gives each write in flight its own region (cache-cold from 1 MiB up on this machine's 32 MiB L3)
        int regions = spread ? window : 1;
        Optional<Fabtests> c = Fabtests.fromEnvironment();
        System.out.printf(
                "engine-write: the engine across two processes (%d lane(s) per NIC, %d progress thread(s), %s chunks)"
                        + " against, in this run,"
                        + " %s and the raw Java fi_write loop in one process; %d writes in flight; each side's best of %d"
                        + " runs (C's first, then the Java sides' %.1f s runs alternating); %s%n",
                lanes,
                progressThreads(),
                FabricWriteRun.bytes(chunkBytes),
                c.map(f -> "C fabtests (" + f.binary() + " -o writedata)")
                        .orElse("no C baseline (set RDMA4J_FABTESTS to a fabtests build)"),
                window,
                ROUNDS,
                o.seconds(),
                spread
                        ? "Java writes spread over " + window + " regions (C reuses one)"
                        : "every write from one source region to one sink region, as fabtests does");
        List<Row> rows = new ArrayList<>();
        int failures = 0;
        try (DirectoryServer dir =
                DirectoryServer.builder().bindAddress("127.0.0.1").port(0).start()) {
            for (String provider : o.providers()) {
                // C first, with no engine of this bench alive: an idle engine's progress threads (a target with a peer
                // wakes every 50 us on shm) took up to half of C's rate on this 2-core machine when C ran beside them
                Map<Long, Double> cRates = new HashMap<>();
                if (c.isPresent()) {
                    for (long size : o.sizes()) {
                        try {
                            cRates.put(
                                    size,
                                    c.get()
                                            .bestWriteGigabytesPerSecond(
                                                    provider, size, window, iterations(o, size), ROUNDS));
                        } catch (IOException e) {
                            failures++;
                            System.out.println("  C baseline failed at " + size + " B: " + e.getMessage());
                        }
                    }
                }
                try (FabricWriteLoop.Pair pair = new FabricWriteLoop.Pair(provider, BUFFER);
                        RemoteTarget ep = new RemoteTarget(provider, dir.target(), lanes, chunkBytes, window)) {
                    System.out.printf(
                            "%n%s (%s)%n  %8s %10s %10s %10s %9s %9s %12s%n",
                            provider,
                            pair.provider(),
                            "size",
                            "C GB/s",
                            "Java GB/s",
                            "engine",
                            "engine/C",
                            "eng/Java",
                            "ns/op extra");
                    FabricWriteLoop.measure(pair, 4096, window, 1000, budget / 4);
                    ep.measure(4096, window, budget / 4);
                    for (long size : o.sizes()) {
                        Double cRate = cRates.get(size);
                        // warm both paths at this size, then alternate and keep each side's best of three: on a shared
                        // machine the other load comes and goes, and alternating exposes both sides to it alike
                        FabricWriteLoop.measure(pair, size, window, regions, 16, budget / 2);
                        ep.measure(size, window, regions, budget / 2);
                        double raw = 0;
                        double eng = 0;
                        for (int round = 0; round < ROUNDS; round++) {
                            raw = Math.max(
                                    raw,
                                    FabricWriteLoop.measure(pair, size, window, regions, 16, budget)
                                            .gigabytesPerSecond());
                            eng = Math.max(eng, ep.measure(size, window, regions, budget));
                        }
                        Row r = new Row(provider, size, eng, raw, cRate);
                        rows.add(r);
                        System.out.printf(
                                Locale.ROOT,
                                "  %8s %10s %10.3f %10.3f %9s %8.2fx %12.0f%n",
                                FabricWriteRun.bytes(size),
                                cRate == null ? "-" : String.format(Locale.ROOT, "%.3f", cRate),
                                raw,
                                eng,
                                cRate == null ? "-" : String.format(Locale.ROOT, "%.2fx", eng / cRate),
                                eng / raw,
                                r.overheadNsPerOp());
                    }
                }
            }
        }
        if (json) {
            StringBuilder sb = new StringBuilder("{\"rows\": [");
            for (int i = 0; i < rows.size(); i++) {
                sb.append(i == 0 ? "" : ", ").append(rows.get(i).json());
            }
            System.out.println(sb.append("]}"));
        }
        return failures;
    }

    private static String value(String[] args, int i) {
        if (i + 1 >= args.length) {
            throw new IllegalArgumentException("option " + args[i] + " needs a value");
        }
        return args[i + 1];
    }

    /** fi_rma_bw iterations for about the run's seconds at 10 GB/s, and more than a window (fabtests requires it). */
    private static long iterations(WriteRunOptions o, long size) {
        long forTime = (long) (o.seconds() * 10e9 / size);
        return Math.max(4L * o.window(), Math.min(100_000, forTime));
    }

    /**
     * The bench's engine on {@code provider}: a libfabric provider ({@code shm}, {@code tcp}), or
     * {@code ibverbs:DEVICE} for the ibverbs backend on one device.
     */
    static TransferEngine.Builder builder(String provider, String name, int lanes, long chunk, int depth) {
        boolean verbs = provider.startsWith("ibverbs:");
        TransferEngine.Builder b = TransferEngine.builder()
                .name(name)
                .backend(verbs ? "ibverbs" : "libfabric")
                .provider(verbs ? provider.substring("ibverbs:".length()) : provider)
                .lanesPerNic(lanes)
                .chunkSize(chunk)
                .queueDepth(Math.max(2, depth))
                .progressThreads(progressThreads())
                .busySpin(SPIN)
                // in the emulated guest a JVM's first gRPC call loads and compiles the client and the server for longer
                // than the default 15 s (two of three engine-ibverbs runs on 2026-12-03 failed their first announce)
                .rendezvousDeadline(Duration.ofMinutes(1));
        return provider.startsWith("tcp") ? b.nicFilter("lo") : b;
    }

    /**
     * The initiator's side of a measured stream of writes into a target's {@code sink}: {@link #measure} keeps a window
     * of writes in flight, and {@link #fence} stops the clock when the bytes are visible at the target.
     */
    abstract static class WriteTarget implements AutoCloseable {
        TransferEngine initiator;
        LocalBuffer source;
        RemoteBuffer sink;
        long tag;

        /**
         * GB/s of writes of {@code size}, {@code window} in flight, until the budget is spent and a final tag landed at
         * the target.
         */
        double measure(long size, int window, long budgetNanos) throws IOException, InterruptedException {
            return measure(size, window, window, budgetNanos);
        }

        /**
         * As {@link #measure(long, int, long)}, the writes cycling through at most {@code regions} distinct source and
         * sink regions (1: fabtests' one reused buffer).
         */
        double measure(long size, int window, int regions, long budgetNanos) throws IOException, InterruptedException {
            long slots = Math.max(1, Math.min(regions, source.length() / size));
            Transfer[] ring = new Transfer[window];
            long posted = 0;
            long t0 = System.nanoTime();
            long end = t0 + budgetNanos;
            while (posted < 16 || System.nanoTime() < end) {
                int k = (int) (posted % window);
                if (ring[k] != null) {
                    ring[k].join();
                }
                long off = (posted % slots) * size;
                ring[k] = initiator.write(source, off, sink, off, size, TransferOptions.DEFAULT);
                posted++;
            }
            for (Transfer t : ring) {
                if (t != null) {
                    t.join();
                }
            }
            fence();
            double seconds = (System.nanoTime() - t0) / 1e9;
            return posted * (double) size / seconds / 1e9;
        }

        /** A tagged 8-byte write, returning once the target says its notification landed. */
        abstract void fence() throws IOException, InterruptedException;

        @Override
        public abstract void close();
    }

    /** This process's initiator engine, and the target engine in a child process ({@link EngineWriteTarget}). */
    static final class RemoteTarget extends WriteTarget {
        final Arena arena = Arena.ofShared();
        final Process child;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final PrintStream toChild;
        final java.nio.file.Path stderr;

        RemoteTarget(String provider, String directory, int lanes, long chunk, int window)
                throws IOException, InterruptedException {
            long pid = ProcessHandle.current().pid();
            String targetName = "bench-target-" + pid;
            List<String> cmd = ChildJava.command(
                    // the target's progress thread backs off or spins as ours does
                    List.of("-Drdma4j.bench.spin=" + SPIN, "-Drdma4j.bench.progressThreads=" + progressThreads()),
                    EngineWriteTarget.class,
                    List.of(
                            directory,
                            targetName,
                            provider,
                            Integer.toString(lanes),
                            Long.toString(chunk),
                            Integer.toString(window),
                            Long.toString(BUFFER)));
            // its stderr goes to a file, whose tail an error names: a launcher (JUnit's, in the test VM) may not show
            // an inherited stream
            stderr = java.nio.file.Files.createTempFile("rdma4j-bench-target-", ".stderr");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(stderr.toFile());
            pb.environment().put("IPATH_NO_BACKTRACE", "1");
            child = pb.start();
            toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
            Thread.ofPlatform().daemon().name("bench-target-stdout").start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (IOException e) {
                    // the child is gone; said below
                }
                lines.add("EXITED");
            });
            TransferEngine ini = null;
            try {
                expect("READY");
                ini = builder(provider, "bench-initiator-" + pid, lanes, chunk, window)
                        .directory(directory, Security.none())
                        .build();
                source = ini.register(arena.allocate(BUFFER, 4096));
                sink = ini.peer(targetName).buffer("sink");
            } catch (RuntimeException | IOException | InterruptedException e) {
                if (ini != null) {
                    ini.close();
                }
                child.destroyForcibly();
                arena.close();
                throw e;
            }
            initiator = ini;
        }

        private void expect(String line) throws IOException, InterruptedException {
            // a JVM under emulation (the test VM) takes minutes to start an engine
            String l = lines.poll(300, TimeUnit.SECONDS);
            if (!line.equals(l)) {
                throw new IOException("the target process said " + (l == null ? "nothing for 300 s" : "'" + l + "'")
                        + " where '" + line + "' was due; its stderr:\n" + stderrTail());
            }
        }

        private String stderrTail() {
            try {
                String s = java.nio.file.Files.readString(stderr, StandardCharsets.UTF_8);
                return s.length() > 6000 ? "..." + s.substring(s.length() - 6000) : s;
            } catch (IOException e) {
                return "(unreadable: " + e.getMessage() + ")";
            }
        }

        @Override
        void fence() throws IOException, InterruptedException {
            long marker = ++tag;
            toChild.println("AWAIT " + marker);
            initiator.write(source, 0, sink, 0, 8, TransferOptions.tag(marker)).join();
            expect("TAG " + marker);
        }

        @Override
        public void close() {
            try {
                initiator.close();
                toChild.close();
                try {
                    if (!child.waitFor(20, TimeUnit.SECONDS)) {
                        child.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    child.destroyForcibly();
                }
            } finally {
                arena.close();
                try {
                    java.nio.file.Files.deleteIfExists(stderr);
                } catch (IOException e) {
                    // a temp file left behind
                }
            }
        }
    }
}
