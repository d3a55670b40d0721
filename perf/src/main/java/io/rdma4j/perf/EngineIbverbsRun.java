package io.rdma4j.perf;

import io.rdma4j.Closeables;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code ./rdma4j bench engine-ibverbs [DEVICE] [SIZE] [ITERATIONS]}: the transfer engine on the ibverbs backend across
 * two processes (the target engine in a child process, as {@code engine-write} runs it; in this process with
 * {@code -Drdma4j.bench.inProcess=true}, as the test VM runs it), next to perftest's {@code ib_write_bw} and
 * {@code ib_write_lat} (C) and the raw Java verbs loop of {@link IbverbsWriteRun}, on one device in the same run. In
 * the test VM ({@code scripts/testvm test perf --select-class io.rdma4j.perf.EngineIbverbsGuestTest}) the device is
 * Soft-RoCE under emulation: only the ratios mean something.
 *
 * <p>Bandwidth: {@code SIZE}-byte writes, 64 in flight (perftest: 128), each side's best of three runs, MB/s with MB =
 * 2^20 as perftest prints it; the engine's clock stops when a final tag has landed in the target process. Latency:
 * perftest's is one way (half a write ping-pong); the engine's is half the time from {@code write} to its completion,
 * which on RC waits for the target's acknowledgement (a round trip). Per-operation cost: the engine's microseconds per
 * write beyond perftest's.
 */
final class EngineIbverbsRun implements BenchRun {
    /**
     * Writes in flight. perftest keeps 128 (its default {@code --tx-depth}); 128 gave the engine no more here (one run
     * under emulation, 29.2 MB/s against 36-45 with 64), and the earlier runs in perf/README.md used 64.
     */
    private static final int WINDOW = 64;
    /** Measured rounds of each side; the best one counts. */
    private static final int ROUNDS = 3;
    /**
     * The longest warm-up of each side, in rounds of up to half a measured one: under emulation the engine's data path
     * was still being compiled after 30 s of rounds (C2 compiling one method in hundreds of milliseconds there).
     */
    private static final long MAX_WARMUP_NANOS = 180_000_000_000L;

    @Override
    public String name() {
        return "engine-ibverbs";
    }

    @Override
    public String summary() {
        return "engine over ibverbs across two processes vs ib_write_bw/ib_write_lat and the raw Java verbs loop";
    }

    @Override
    public int run(String[] args) throws Exception {
        String dev = args.length > 0 ? args[0] : "rxe0";
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 65536;
        int iters = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int latIters = 1000;
        Integer gid = IbverbsWriteRun.roceGid(name(), dev);
        if (gid == null) {
            return 2;
        }
        // each side's best of ROUNDS, as for the engine: one perftest run under emulation has come out at 60% of the
        // next
        MachineCpu[] perfCpu = new MachineCpu[2];
        double[] perfBw = {0};
        for (int round = 0; round < ROUNDS; round++) {
            MachineCpu[] span = new MachineCpu[2];
            double[] r = IbverbsWriteRun.perftest("ib_write_bw", dev, gid, size, iters, 18525, 3, span);
            if (r[0] > perfBw[0]) {
                perfBw = r;
                perfCpu = span;
            }
        }
        double[] perfLat = IbverbsWriteRun.perftest("ib_write_lat", dev, gid, 8, latIters, 18526, 4);
        // JIT warm-up, not measured (perftest is native code): until the compilers go quiet, as for the engine
        int javaWarm = JitWarmup.untilQuiet(
                () -> IbverbsWriteRun.javaBandwidth(dev, gid, size, Math.max(16, iters / 2)), MAX_WARMUP_NANOS);
        MachineCpu[] javaCpu = new MachineCpu[2 * ROUNDS];
        double[] javaRounds = new double[ROUNDS];
        for (int round = 0; round < ROUNDS; round++) {
            javaCpu[2 * round] = MachineCpu.now();
            javaRounds[round] = IbverbsWriteRun.javaBandwidth(dev, gid, size, iters);
            javaCpu[2 * round + 1] = MachineCpu.now();
        }
        int javaBest = 0;
        for (int round = 1; round < ROUNDS; round++) {
            javaBest = javaRounds[round] > javaRounds[javaBest] ? round : javaBest;
        }
        double javaBw = javaRounds[javaBest];
        MachineCpu javaBefore = javaCpu[2 * javaBest];
        MachineCpu javaAfter = javaCpu[2 * javaBest + 1];
        double engineBw;
        String engineCpu = "";
        int engineWarm;
        double[] engineLat;
        try (DirectoryServer dir =
                DirectoryServer.builder().bindAddress("127.0.0.1").port(0).start()) {
            try (EngineWriteRun.WriteTarget ep = target("ibverbs:" + dev, dir.target(), size)) {
                // seconds for about `iters` writes at perftest's rate, at least 1 s: emulated devices are slow
                long budget = (long) Math.max(1e9, 1e9 * size * (double) iters / (perfBw[0] * (1 << 20)));
                engineWarm = JitWarmup.untilQuiet(() -> ep.measure(size, WINDOW, budget / 2), MAX_WARMUP_NANOS);
                engineBw = 0;
                // formatted after all rounds: code that runs only between them would be compiled during the next
                MachineCpu[] cpu = new MachineCpu[2 * ROUNDS];
                double[] mbps = new double[ROUNDS];
                long[] writes = new long[ROUNDS];
                for (int round = 0; round < ROUNDS; round++) {
                    cpu[2 * round] = MachineCpu.now();
                    long t0 = System.nanoTime();
                    double gbps = ep.measure(size, WINDOW, budget);
                    writes[round] = Math.round(gbps * (System.nanoTime() - t0) / size);
                    cpu[2 * round + 1] = MachineCpu.now();
                    mbps[round] = gbps * 1e9 / (1 << 20);
                }
                for (int round = 0; round < ROUNDS; round++) {
                    String perWrite = MachineCpu.perOperation(cpu[2 * round], cpu[2 * round + 1], writes[round]);
                    System.out.printf(
                            Locale.ROOT, "engine round %d: %.1f MB/s, %s%n", round + 1, mbps[round], perWrite);
                    if (mbps[round] > engineBw) {
                        engineBw = mbps[round];
                        engineCpu = perWrite;
                    }
                }
                engineLat = latency(ep, latIters);
            }
        }
        System.out.printf(
                "%nengine-ibverbs on %s (same device, same run; engine %s)%n",
                dev,
                Boolean.getBoolean("rdma4j.bench.inProcess")
                        ? "target and initiator in one process"
                        : "across two processes");
        System.out.printf(
                Locale.ROOT, "  %-34s %11s %11s %11s %9s%n", "", "perftest", "Java verbs", "engine", "engine/C");
        System.out.printf(
                Locale.ROOT,
                "  %-34s %11.1f %11.1f %11.1f %8.2fx%n",
                "write bw " + size + " B, MB/s (2^20)",
                perfBw[0],
                javaBw,
                engineBw,
                engineBw / perfBw[0]);
        System.out.printf(
                Locale.ROOT,
                "  %-34s %11.2f %11s %11.2f %8.2fx%n",
                "write lat 8 B typical, us (one-way)",
                perfLat[0],
                "-",
                engineLat[0],
                engineLat[0] / perfLat[0]);
        System.out.printf(
                Locale.ROOT,
                "  %-34s %11.2f %11s %11.2f %8.2fx%n",
                "write lat 8 B average, us (one-way)",
                perfLat[1],
                "-",
                engineLat[1],
                engineLat[1] / perfLat[1]);
        double perfUsPerOp = size / (perfBw[0] * (1 << 20)) * 1e6;
        double engUsPerOp = size / (engineBw * (1 << 20)) * 1e6;
        System.out.printf(
                Locale.ROOT,
                "  per write of %d B: perftest %.2f us, engine %.2f us (%.2f us extra)%n",
                size,
                perfUsPerOp,
                engUsPerOp,
                engUsPerOp - perfUsPerOp);
        System.out.println("  (bandwidth ratio > 1: engine faster; latency ratio < 1: engine faster)");
        System.out.printf(
                "  warm-up rounds until the JIT went quiet: Java verbs %s, engine %s%n",
                warmups(javaWarm), warmups(engineWarm));
        System.out.println("  where the machine's CPU went in each bandwidth step:");
        System.out.println(
                "    perftest (best client's run):   " + MachineCpu.perOperation(perfCpu[0], perfCpu[1], iters));
        System.out.println(
                "    Java verbs (best, with set-up): " + MachineCpu.perOperation(javaBefore, javaAfter, iters));
        System.out.println("    engine (best round):            " + engineCpu);
        return 0;
    }

    /**
     * The target engine: in a child process, as {@code engine-write} runs it, unless
     * {@code -Drdma4j.bench.inProcess=true} puts it in this one. In the test VM a second JVM under emulation has spent
     * over 30 s just connecting to the directory, so the guest test runs both engines here; they still meet only
     * through the directory and the device.
     */
    static EngineWriteRun.WriteTarget target(String provider, String directory, long chunk)
            throws IOException, InterruptedException {
        if (Boolean.getBoolean("rdma4j.bench.inProcess")) {
            return new LocalTarget(provider, directory, chunk);
        }
        return new EngineWriteRun.RemoteTarget(provider, directory, 1, chunk, WINDOW);
    }

    /** Initiator and target engines in this process, each its own peer in the directory. */
    static final class LocalTarget extends EngineWriteRun.WriteTarget {
        private final Arena arena = Arena.ofShared();
        private final TransferEngine target;

        LocalTarget(String provider, String directory, long chunk) {
            long pid = ProcessHandle.current().pid();
            TransferEngine t = null;
            try {
                t = EngineWriteRun.builder(provider, "bench-target-" + pid, 1, chunk, WINDOW)
                        .directory(directory, Security.none())
                        .build();
                t.publish("sink", t.register(arena.allocate(EngineWriteRun.BUFFER, 4096)), Access.anyPeer());
                initiator = EngineWriteRun.builder(provider, "bench-initiator-" + pid, 1, chunk, WINDOW)
                        .directory(directory, Security.none())
                        .build();
                source = initiator.register(arena.allocate(EngineWriteRun.BUFFER, 4096));
                sink = initiator.peer(t.name()).buffer("sink");
            } catch (RuntimeException e) {
                throw Closeables.closeAllInto(e, initiator, t, arena);
            }
            target = t;
        }

        @Override
        void fence() throws InterruptedException, IOException {
            long marker = ++tag;
            initiator.write(source, 0, sink, 0, 8, TransferOptions.tag(marker)).join();
            if (target.awaitTag(marker, Duration.ofSeconds(30)) == null) {
                throw new IOException("tag " + marker + " did not reach the target engine within 30 s");
            }
        }

        @Override
        public void close() {
            Closeables.closeAll(initiator, target, arena);
        }
    }

    private static String warmups(int runs) {
        return runs > 0 ? Integer.toString(runs) : -runs + " (still compiling after the last)";
    }

    /** {typical, average} one-way microseconds: half of each 8-byte write's time to its completion. */
    private static double[] latency(EngineWriteRun.WriteTarget ep, int iters) {
        long[] t = new long[iters];
        for (int i = -200; i < iters; i++) { // 200 unmeasured: JIT warm-up
            long t0 = System.nanoTime();
            ep.initiator
                    .write(ep.source, 0, ep.sink, 0, 8, TransferOptions.DEFAULT)
                    .join();
            if (i >= 0) {
                t[i] = System.nanoTime() - t0;
            }
        }
        long[] sorted = t.clone();
        Arrays.sort(sorted);
        return new double[] {sorted[iters / 2] / 2e3, Arrays.stream(t).average().orElse(0) / 2e3};
    }
}
