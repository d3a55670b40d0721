package io.rdma4j.perf;

import io.rdma4j.engine.HostMemory;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.weights.PublishResult;
import io.rdma4j.weights.Shard;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.TensorSet;
import io.rdma4j.weights.WeightPublisher;
import io.rdma4j.weights.WeightPublisherBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * {@code ./rdma4j bench weights [--sizes 1g,4g] [--subscribers 1,2,4] [--providers shm,tcp] [--repeat 2]}: weight sync
 * from publishers in this process to subscriber processes on this machine. Per provider and size: one trainer rank to
 * 1, 2 and 4 subscribers that need every byte, direct fan-out (the publisher writes every copy: the baseline) and relay
 * chains; then the same bytes aligned (two trainer ranks split along dim 0, two subscribers each needing one rank's
 * half: contiguous, one to one) against resharded (the two subscribers need halves of dim 1: rows of both ranks,
 * strided). Each point: fresh subscriber processes, a warm-up version per subscriber buffer (so that every buffer and
 * every code path has been through one version before the timing starts), then the best of {@code --repeat} versions,
 * each timed from {@code publish} to the last subscriber's confirmation and sample-checked in every subscriber, and
 * beside it the slowest of them (one stalled version shows there), and in how many of them a trainer rank resent a
 * subscriber's pieces after its grace ({@link io.rdma4j.weights.PublishResult#resent()}: a stall that the publisher
 * repaired). GB/s counts bytes delivered to subscribers. Subscribers keep two buffers, or one where two would not fit
 * in {@code --memory-fraction} (0.8 by default) of the available memory (said beside the point); a point that would not
 * fit even so is skipped and said so.
 *
 * <p>Beside them, per size, the machine's copy floor ({@link CopyFloor}): the same bytes copied by as many threads at
 * once as the fewest and the most subscribers, the least time any CPU-copy transport (shm, tcp) can take here, and its
 * ratio the least the relay's ratio can be.
 *
 * <p>And per point, the CPU its best version cost ({@link ProcessCpu}): the CPU seconds the trainer's and the
 * subscribers' processes used from {@code publish} to its result, counted in clock ticks (10 ms a process). On a
 * machine whose cores the processes share, the time cannot fall below that CPU divided by the cores, so it tells a plan
 * that costs more work from one that waits longer.
 */
final class WeightsRun implements BenchRun {
    private static final String USAGE =
            " (--sizes 1g,4g --subscribers 1,2,4 --providers shm,tcp --repeat 2 --memory-fraction 0.8; sizes take k, m,"
                    + " g suffixes)";

    @Override
    public String name() {
        return "weights";
    }

    @Override
    public String summary() {
        return "weight sync of 1 and 4 GiB to 1, 2, 4 subscriber processes: relay vs direct, resharded vs not";
    }

    /**
     * A point's best time, what that version moved, the CPU seconds it cost in all the processes (the trainer's and the
     * subscribers'; NaN when one's was unknown), the slowest timed version's time (a stall in one version shows there,
     * not in the best), and in how many timed versions a rank resent a subscriber's pieces ({@code k/n}).
     */
    record Point(
            double seconds,
            long delivered,
            long publisherBytes,
            long relayedBytes,
            String failure,
            int buffers,
            double cpuSeconds,
            double worstSeconds,
            String resent) {
        Point(double seconds, long delivered, long publisherBytes, long relayedBytes, String failure) {
            this(seconds, delivered, publisherBytes, relayedBytes, failure, 2, Double.NaN, Double.NaN, "-");
        }

        double gbps() {
            return delivered / seconds / 1e9;
        }
    }

    @Override
    public int run(String[] args) throws Exception {
        long[] sizes = {1L << 30, 4L << 30};
        int[] counts = {1, 2, 4};
        List<String> providers = List.of("shm", "tcp");
        int repeat = 2;
        double memoryFraction = 0.8;
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException("option " + args[args.length - 1] + " needs a value" + USAGE);
        }
        for (int i = 0; i < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--sizes" ->
                    sizes = Arrays.stream(v.split(","))
                            .mapToLong(WeightsRun::size)
                            .toArray();
                case "--subscribers" ->
                    counts = Arrays.stream(v.split(","))
                            .mapToInt(Integer::parseInt)
                            .toArray();
                case "--providers" -> providers = List.of(v.split(","));
                case "--repeat" -> repeat = Integer.parseInt(v);
                case "--memory-fraction" -> memoryFraction = Double.parseDouble(v);
                default -> throw new IllegalArgumentException("unknown option " + args[i] + USAGE);
            }
        }
        if (repeat < 1
                || !(memoryFraction >= 0.1 && memoryFraction <= 0.95)
                || Arrays.stream(counts).anyMatch(c -> c < 1 || c > 16)
                || Arrays.stream(sizes).anyMatch(s -> s < (1L << 20))) {
            throw new IllegalArgumentException(
                    "need --repeat >= 1, 1 to 16 subscribers, sizes of 1m or more and a --memory-fraction of 0.1 to"
                            + " 0.95" + USAGE);
        }
        PrintStream out = System.out;
        out.printf(
                "weights: publishers in this process, subscriber processes on this machine; per point a warm-up"
                        + " version per subscriber buffer, then best of %d (and the worst); GB/s = bytes delivered to"
                        + " subscribers / s%n",
                repeat);
        int failures = 0;
        Map<Long, double[]> floors = new java.util.HashMap<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start()) {
            for (String provider : providers) {
                for (long size : sizes) {
                    long rows = WeightsBenchSubscriber.rows(size);
                    long bytes = rows * WeightsBenchSubscriber.ROW_BYTES * WeightsBenchSubscriber.TENSORS;
                    out.printf(
                            "%n%s, %s (%d tensors of BF16[%d, %d])%n  %-34s %9s %9s %9s %12s %12s %9s %7s%n",
                            provider,
                            bytes(bytes),
                            WeightsBenchSubscriber.TENSORS,
                            rows,
                            WeightsBenchSubscriber.COLUMNS,
                            "subscribers, plan",
                            "s",
                            "CPU s",
                            "GB/s",
                            "trainer B",
                            "relayed B",
                            "worst s",
                            "resent");
                    int max = Arrays.stream(counts).max().orElseThrow();
                    double[] floor = floors.get(bytes);
                    if (floor == null) {
                        floor = new double[] {CopyFloor.seconds(bytes, counts[0]), CopyFloor.seconds(bytes, max)};
                        floors.put(bytes, floor);
                    }
                    out.printf(
                            "  copy floor: %.3f s for %d thread(s) of this process copying %s each at once, %.3f s for"
                                    + " %d (%.2fx)%n",
                            floor[0], counts[0], bytes(bytes), floor[1], max, floor[1] / floor[0]);
                    Point relay1 = null;
                    Point relayMax = null;
                    Point directMax = null;
                    for (int n : counts) {
                        for (boolean relay : new boolean[] {false, true}) {
                            String[] parts = new String[n];
                            Arrays.fill(parts, "full");
                            Point p = point(
                                    dir.target(),
                                    provider,
                                    rows,
                                    1,
                                    parts,
                                    relay,
                                    repeat,
                                    bytes,
                                    bytes * n,
                                    memoryFraction);
                            print(out, n + " full, " + (relay ? "relay chains" : "direct fan-out"), p);
                            failures += p.failure() != null && !p.failure().startsWith("skipped") ? 1 : 0;
                            if (relay && n == counts[0]) {
                                relay1 = p;
                            }
                            if (n == max) {
                                if (relay) {
                                    relayMax = p;
                                } else {
                                    directMax = p;
                                }
                            }
                        }
                    }
                    Point aligned = point(
                            dir.target(),
                            provider,
                            rows,
                            2,
                            new String[] {"0:0:2", "0:1:2"},
                            true,
                            repeat,
                            bytes,
                            bytes,
                            memoryFraction);
                    print(out, "2 halves, aligned (dim 0 = TP)", aligned);
                    Point resharded = point(
                            dir.target(),
                            provider,
                            rows,
                            2,
                            new String[] {"1:0:2", "1:1:2"},
                            true,
                            repeat,
                            bytes,
                            bytes,
                            memoryFraction);
                    print(out, "2 halves, resharded (dim 1)", resharded);
                    failures += (aligned.failure() != null && !aligned.failure().startsWith("skipped") ? 1 : 0)
                            + (resharded.failure() != null
                                            && !resharded.failure().startsWith("skipped")
                                    ? 1
                                    : 0);
                    out.printf(
                            "  %d subs vs %d, relay: %s time (the copy floor's: %.2fx); relay vs direct at %d subs: %s"
                                    + " of direct's time, %s of its CPU; resharding: %s of aligned's time, %s of its"
                                    + " CPU%n",
                            max,
                            counts[0],
                            ratio(relayMax, relay1),
                            floor[1] / floor[0],
                            max,
                            ratio(relayMax, directMax),
                            cpuRatio(relayMax, directMax),
                            ratio(resharded, aligned),
                            cpuRatio(resharded, aligned));
                }
            }
        }
        return failures == 0 ? 0 : 1;
    }

    private static String ratio(Point a, Point b) {
        return ratio(a, b, Point::seconds);
    }

    private static String cpuRatio(Point a, Point b) {
        return ratio(a, b, Point::cpuSeconds);
    }

    /** {@return a's {@code of} over b's, or n/a when either failed or the quotient is not a number} */
    private static String ratio(Point a, Point b, ToDoubleFunction<Point> of) {
        if (a == null || b == null || a.failure() != null || b.failure() != null) {
            return "n/a";
        }
        double r = of.applyAsDouble(a) / of.applyAsDouble(b);
        return Double.isFinite(r) ? String.format("%.2fx", r) : "n/a";
    }

    private static void print(PrintStream out, String label, Point p) {
        if (p.failure() != null) {
            out.printf("  %-34s %s%n", label, p.failure());
        } else {
            out.printf(
                    "  %-34s %9.3f %9.3f %9.3f %12d %12d %9.3f %7s%s%n",
                    label,
                    p.seconds(),
                    p.cpuSeconds(),
                    p.gbps(),
                    p.publisherBytes(),
                    p.relayedBytes(),
                    p.worstSeconds(),
                    p.resent(),
                    p.buffers() == 1 ? "  (one buffer per subscriber: two would not fit)" : "");
        }
        out.flush();
    }

    /** A subscriber process and what it says. */
    private record Child(Process process, BlockingQueue<String> lines, PrintStream stdin) {
        String next() throws InterruptedException {
            String l = lines.poll(600, TimeUnit.SECONDS);
            return l == null ? "silent for 600 s" : l;
        }
    }

    private static int seq;

    /**
     * One point: {@code ranks} trainer ranks (split along dim 0) in this process, one subscriber process per entry of
     * {@code parts}; returns the best time of {@code repeat} versions after a warm-up one per subscriber buffer.
     */
    private static Point point(
            String dir,
            String provider,
            long rows,
            int ranks,
            String[] parts,
            boolean relay,
            int repeat,
            long tensorBytes,
            long neededBytes,
            double memoryFraction)
            throws Exception {
        long available = availableMemory();
        long usable = (long) (available * memoryFraction);
        // double-buffered subscribers where they fit, else single-buffered (one version at a time either way here)
        int buffers = 2;
        long memory = tensorBytes + 2 * neededBytes;
        if (available > 0 && memory > usable) {
            buffers = 1;
            memory = tensorBytes + neededBytes;
        }
        if (available > 0 && memory > usable) {
            return new Point(
                    0,
                    0,
                    0,
                    0,
                    "skipped: needs about " + bytes(memory) + " with one buffer per subscriber, over "
                            + Math.round(memoryFraction * 100) + "% of the " + bytes(available)
                            + " available (lower --sizes or --subscribers, or raise --memory-fraction)");
        }
        String prefix = "wbench-" + ProcessHandle.current().pid() + "-" + (++seq);
        List<String> pubNames = new ArrayList<>();
        for (int r = 0; r < ranks; r++) {
            pubNames.add(prefix + "-trainer-" + r);
        }
        List<Child> children = new ArrayList<>();
        List<TransferEngine> engines = new ArrayList<>();
        List<WeightPublisher> pubs = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(ranks);
        try (Arena arena = Arena.ofShared()) {
            for (int i = 0; i < parts.length; i++) {
                children.add(start(List.of(
                        dir,
                        provider,
                        prefix + "-sub-" + i,
                        String.join(",", pubNames),
                        Long.toString(rows),
                        parts[i],
                        Integer.toString(buffers))));
            }
            long[] full = {rows, WeightsBenchSubscriber.COLUMNS};
            List<List<MemorySegment>> held = new ArrayList<>();
            for (int r = 0; r < ranks; r++) {
                Shard shard = ranks == 1 ? Shard.FULL : Shard.split(0, rows, r, ranks);
                List<Tensor> ts = new ArrayList<>();
                List<MemorySegment> ms = new ArrayList<>();
                for (int t = 0; t < WeightsBenchSubscriber.TENSORS; t++) {
                    long[] shape = shard.shape(full);
                    MemorySegment m = HostMemory.allocate(arena, Tensor.byteSize(WeightsBenchSubscriber.TYPE, shape));
                    ms.add(m);
                    ts.add(Tensor.host(WeightsBenchSubscriber.name(t), WeightsBenchSubscriber.TYPE, shape, m));
                }
                held.add(ms);
                engines.add(WeightsBenchSubscriber.engine(pubNames.get(r), provider, dir));
                WeightPublisherBuilder b = WeightPublisher.builder(engines.get(r), new TensorSet(ts, Map.of()))
                        .rank(r)
                        .relay(relay)
                        .deadline(Duration.ofSeconds(120))
                        .shards(n -> shard);
                for (int t = 0; t < WeightsBenchSubscriber.TENSORS; t++) {
                    b.fullShape(WeightsBenchSubscriber.name(t), full);
                }
                pubs.add(b.build());
            }
            for (Child c : children) {
                String l = c.next();
                if (!l.equals("JOINED")) {
                    return new Point(0, 0, 0, 0, "FAILED: a subscriber said '" + l + "' where JOINED was expected");
                }
            }
            for (WeightPublisher p : pubs) {
                try {
                    p.awaitSubscribers(parts.length, Duration.ofSeconds(60));
                } catch (io.rdma4j.engine.TransferTimeoutException e) {
                    return new Point(0, 0, 0, 0, "FAILED: " + e.getMessage());
                }
            }
            double best = Double.MAX_VALUE;
            double worst = 0;
            long delivered = 0;
            long pubBytes = 0;
            long relayed = 0;
            List<ProcessHandle> all = new ArrayList<>();
            all.add(ProcessHandle.current());
            for (Child c : children) {
                all.add(c.process().toHandle());
            }
            ProcessCpu cpu = new ProcessCpu(all);
            double bestCpu = Double.NaN;
            int resentVersions = 0;
            // the first version into each subscriber buffer runs colder code (the subscribers' JIT still compiling);
            // over tcp it was often the slowest of a point, so it is not timed
            int warmUps = buffers;
            for (int v = 1; v <= warmUps + repeat; v++) {
                for (int r = 0; r < ranks; r++) {
                    Shard shard = ranks == 1 ? Shard.FULL : Shard.split(0, rows, r, ranks);
                    for (int t = 0; t < WeightsBenchSubscriber.TENSORS; t++) {
                        WeightsBenchSubscriber.fill(held.get(r).get(t), v, t, shard, rows);
                    }
                }
                long version = v;
                // from publish to the last confirmation, as the time counts: the subscribers' checks come after
                long cpu0 = cpu.nanos();
                List<Future<PublishResult>> running = new ArrayList<>();
                for (WeightPublisher p : pubs) {
                    running.add(pool.submit(() -> p.publish(version)));
                }
                long nanos = 0;
                long pb = 0;
                long rb = 0;
                boolean resend = false;
                for (Future<PublishResult> f : running) {
                    PublishResult res = f.get();
                    if (res.synced() != parts.length) {
                        return new Point(0, 0, 0, 0, "FAILED: version " + v + ": " + res.outcomes());
                    }
                    nanos = Math.max(nanos, res.nanos());
                    resend |= !res.resent().isEmpty();
                    pb += res.publisherBytes();
                    rb += res.relayedBytes();
                }
                long cpu1 = cpu.nanos();
                for (Child c : children) {
                    String l = c.next();
                    if (!l.equals("OK " + v)) {
                        return new Point(0, 0, 0, 0, "FAILED: a subscriber said '" + l + "' after version " + v);
                    }
                }
                double took = nanos / 1e9;
                if (v > warmUps) {
                    resentVersions += resend ? 1 : 0;
                    worst = Math.max(worst, took);
                    if (took < best) {
                        best = took;
                        delivered = pb + rb;
                        pubBytes = pb;
                        relayed = rb;
                        bestCpu = cpu0 < 0 || cpu1 < 0 ? Double.NaN : (cpu1 - cpu0) / 1e9;
                    }
                }
            }
            return new Point(
                    best, delivered, pubBytes, relayed, null, buffers, bestCpu, worst, resentVersions + "/" + repeat);
        } finally {
            pool.shutdownNow();
            for (WeightPublisher p : pubs) {
                p.close();
            }
            for (TransferEngine e : engines) {
                e.close();
            }
            for (Child c : children) {
                c.stdin().close();
            }
            for (Child c : children) {
                if (!c.process().waitFor(10, TimeUnit.SECONDS)) {
                    c.process().destroyForcibly();
                }
            }
        }
    }

    private static Child start(List<String> args) throws IOException {
        List<String> cmd = ChildJava.command(
                List.of("-Drdma4j.bench.progressThreads=" + EngineWriteRun.progressThreads()),
                WeightsBenchSubscriber.class,
                args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // gone
            }
            lines.add("exited" + (p.isAlive() ? "" : " with status " + p.exitValue()));
        });
        return new Child(p, lines, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8));
    }

    /** {@return MemAvailable from /proc/meminfo in bytes, or -1 where there is none} */
    private static long availableMemory() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (l.startsWith("MemAvailable:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux: no guard
        }
        return -1;
    }

    static long size(String s) {
        String t = s.trim().toLowerCase(java.util.Locale.ROOT);
        long mult = 1;
        char last = t.charAt(t.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g') {
            mult = last == 'k' ? 1L << 10 : last == 'm' ? 1L << 20 : 1L << 30;
            t = t.substring(0, t.length() - 1);
        }
        return Long.parseLong(t) * mult;
    }

    static String bytes(long n) {
        return n >= 1L << 30 ? String.format("%.1f GiB", n / (double) (1L << 30)) : (n >> 20) + " MiB";
    }
}
