package io.rdma4j.perf;

import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.PolledQueue;
import io.rdma4j.nvmeof.Target;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ./rdma4j bench nvme --tcp|--rdma HOST:PORT --nqn NQN [--nsid 1] [--kernel-dev /dev/nvmeXnY] [--seconds 3]
 * [--warmup 1] [--only PART-OF-NAME] [--json] [--no-spdk] [--polled-io on|off] [--busy-poll 50]}, or {@code ./rdma4j
 * bench nvme --spdk-target [--tcp 127.0.0.1:PORT] ...}: 4 KiB random read and write at QD1 and QD32 (IOPS, latency
 * percentiles), 128 KiB and 1 MiB sequential read and write throughput at QD8, through this initiator twice: its
 * thread-safe {@code Controller} API (4 I/O queues of depth 64, each run by one thread of its own on the polled data
 * path, or with {@code --polled-io off} by a reader and a writer thread; a queue thread with I/O in flight polls for
 * {@code --busy-poll} microseconds, 50 unless told, before it sleeps; as many chains of I/O as the queue depth, each
 * sending its next I/O from the completion callback of the one before, as {@code spdk_nvme_perf} does) and a
 * {@code PolledQueue} (NVMe/TCP, depth 64) driven from the measuring thread alone ({@link NvmePolledLoop}); each
 * workload after an uncounted warm-up, next to the baselines measured in the same run against the same target for the
 * same workloads:
 *
 * <ul>
 *   <li>SPDK's initiator, {@code spdk_nvme_perf} ({@link SpdkPerf}, NVMe/TCP), where {@code RDMA4J_SPDK} names an SPDK
 *       build; with {@code --spdk-target} the run also starts that build's {@code nvmf_tgt} ({@link SpdkTarget}: a 512
 *       MiB malloc bdev at 4 KiB blocks on 127.0.0.1, reactor on core 1 by {@code --target-cores 0x2}) and measures
 *       against it, SPDK's perf on core 0 by {@code --spdk-cores 0x1}; {@code --no-spdk} leaves this baseline out;
 *   <li>the kernel's initiator of the same transport, with {@code --kernel-dev}: the block device of {@code nvme
 *       connect -t tcp|rdma} to the same subsystem, O_DIRECT, one thread per outstanding I/O.
 * </ul>
 *
 * With {@code --rounds N} (N > 1, SPDK and the polled queue both measured) each workload then runs N - 1 more rounds,
 * {@code Controller}, the polled queue and SPDK's perf one after the other, and prints rdma4j/SPDK and polled/SPDK IOPS
 * of every round and their medians: on a shared machine whose speed drifts between runs, sides measured back to back
 * compare better than one of each.
 *
 * <p>With {@code --json} the last line is one object, a row per workload: IOPS, MB/s, p50 and p99 of each side measured
 * ({@code null} for a side not run), rdma4j/SPDK IOPS, and with {@code --rounds} every round's polled/SPDK and
 * rdma4j/SPDK IOPS and their medians. The workloads write: use a scratch namespace.
 */
final class NvmeRun implements BenchRun {
    @Override
    public String name() {
        return "nvme";
    }

    @Override
    public String summary() {
        return "NVMe/TCP or NVMe/RDMA 4 KiB QD1/QD32 IOPS and latency, 128 KiB / 1 MiB throughput"
                + " vs SPDK's spdk_nvme_perf and the kernel initiator";
    }

    private record Workload(String name, int size, int qd, boolean write, boolean random) {
        /** {@return spdk_nvme_perf's -w for this workload} */
        String spdkPattern() {
            return (random ? "rand" : "") + (write ? "write" : "read");
        }
    }

    /** One side's figures for one workload; latencies in microseconds. */
    private record Figures(double iops, double mbps, double p50Us, double p99Us) {
        String line() {
            return String.format(
                    Locale.ROOT, "%10.0f IOPS %9.1f MB/s  p50 %7.1f us  p99 %8.1f us", iops, mbps, p50Us, p99Us);
        }

        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"iops\": %.0f, \"MBps\": %.1f, \"p50Us\": %s, \"p99Us\": %s}",
                    iops,
                    mbps,
                    number(p50Us),
                    number(p99Us));
        }

        static String json(Figures f) {
            return f == null ? "null" : f.json();
        }

        private static String number(double v) {
            return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.1f", v);
        }
    }

    /**
     * @param rounds polled/SPDK IOPS of each round with {@code --rounds}, the first being the row's own figures; empty
     *     without
     */
    private record Row(
            Workload w,
            Figures rdma4j,
            Figures polled,
            Figures spdk,
            Figures kernel,
            List<Double> rdma4jRounds,
            List<Double> rounds) {
        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"workload\": \"%s\", \"bytes\": %d, \"qd\": %d, \"rdma4j\": %s, \"rdma4jPolled\": %s,"
                            + " \"spdk\": %s, \"kernel\": %s, \"rdma4jOverSpdk\": %s, \"polledOverSpdk\": %s,"
                            + " \"polledOverSpdkRounds\": %s, \"polledOverSpdkMedian\": %s,"
                            + " \"rdma4jOverSpdkRounds\": %s, \"rdma4jOverSpdkMedian\": %s}",
                    w.name(),
                    w.size(),
                    w.qd(),
                    rdma4j.json(),
                    Figures.json(polled),
                    Figures.json(spdk),
                    Figures.json(kernel),
                    ratio(rdma4j, spdk),
                    ratio(polled, spdk),
                    list(rounds),
                    medianOrNull(rounds),
                    list(rdma4jRounds),
                    medianOrNull(rdma4jRounds));
        }

        private static String list(List<Double> values) {
            return values.stream()
                    .map(v -> String.format(Locale.ROOT, "%.3f", v))
                    .toList()
                    .toString();
        }

        private static String medianOrNull(List<Double> values) {
            return values.isEmpty() ? "null" : String.format(Locale.ROOT, "%.3f", median(values));
        }

        private static String ratio(Figures a, Figures b) {
            return a == null || b == null ? "null" : String.format(Locale.ROOT, "%.3f", a.iops() / b.iops());
        }
    }

    private static void printMedian(Workload w, String what, List<Double> ratios) {
        System.out.printf(
                "%-22s %s over %d alternating rounds: median %.2f, %.2f to %.2f%n",
                w.name(),
                what,
                ratios.size(),
                median(ratios),
                ratios.stream().mapToDouble(Double::doubleValue).min().orElseThrow(),
                ratios.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
    }

    /** {@return the median of {@code values}, not empty} */
    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** What one side did in one workload: operations, seconds, latencies in nanoseconds. */
    record Result(long ops, double seconds, long[] lat) {
        Figures figures(int size) {
            Arrays.sort(lat);
            double iops = ops / seconds;
            return new Figures(iops, iops * size / 1e6, pct(0.5), pct(0.99));
        }

        double pct(double p) {
            return lat.length == 0 ? Double.NaN : lat[Math.min(lat.length - 1, (int) (p * lat.length))] / 1000.0;
        }
    }

    /** One I/O of a workload: issue it, call done when complete. */
    private interface Engine {
        void io(boolean write, long offset, int size, int slot, java.util.function.Consumer<Throwable> done)
                throws Exception;
    }

    /**
     * How long the controller's queue threads poll before they sleep, unless {@code --busy-poll} says: SPDK's perf, the
     * baseline, polls all the time.
     */
    static final long DEFAULT_BUSY_POLL_MICROS = 50;

    private static final String USAGE = "usage: ./rdma4j bench nvme --tcp|--rdma HOST:PORT --nqn NQN [--nsid 1]"
            + " [--kernel-dev /dev/nvmeXnY] [--seconds 3] [--warmup 1] [--only PART-OF-NAME] [--json] [--no-spdk]"
            + " [--polled-io on|off] [--busy-poll 50] [--rounds 1], or --spdk-target [--tcp"
            + " 127.0.0.1:PORT] [--target-cores 0x2] [--spdk-cores 0x1] (SPDK from RDMA4J_SPDK)";

    @Override
    public int run(String[] args) throws Exception {
        String nqn = null, dev = null;
        Target target = null;
        long nsid = 1;
        double seconds = 3;
        double warmup = 1;
        int rounds = 1;
        long busyPollMicros = DEFAULT_BUSY_POLL_MICROS;
        boolean json = false, spdkTarget = false, noSpdk = false, polledIo = ConnectOptions.DEFAULT_POLLED_IO;
        String targetCores = "0x2", spdkCores = "0x1", only = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--spdk-target" -> spdkTarget = true;
                case "--no-spdk" -> noSpdk = true;
                case "--tcp" -> target = Target.parseTcp(value(args, i++));
                case "--rdma" -> target = Target.parseRdma(value(args, i++));
                case "--nqn" -> nqn = value(args, i++);
                case "--nsid" -> nsid = Long.parseLong(value(args, i++));
                case "--kernel-dev" -> dev = value(args, i++);
                case "--seconds" -> seconds = Double.parseDouble(value(args, i++));
                case "--warmup" -> warmup = Double.parseDouble(value(args, i++));
                case "--target-cores" -> targetCores = value(args, i++);
                case "--spdk-cores" -> spdkCores = value(args, i++);
                case "--only" -> only = value(args, i++);
                case "--rounds" -> {
                    rounds = Integer.parseInt(value(args, i++));
                    if (rounds < 1 || rounds > 50) {
                        throw new IllegalArgumentException("--rounds takes 1 to 50, not " + rounds);
                    }
                }
                case "--busy-poll" -> {
                    busyPollMicros = Long.parseLong(value(args, i++));
                    if (busyPollMicros < 0 || busyPollMicros > 1_000_000) {
                        throw new IllegalArgumentException(
                                "--busy-poll takes microseconds from 0 (sleep at once) to 1000000, not "
                                        + busyPollMicros);
                    }
                }
                case "--polled-io" ->
                    polledIo = switch (value(args, i++)) {
                        case "on" -> true;
                        case "off" -> false;
                        default -> throw new IllegalArgumentException("--polled-io takes on or off");
                    };
                default -> {
                    System.err.println("unknown option " + args[i] + "; " + USAGE);
                    return 2;
                }
            }
        }
        Optional<SpdkBuild> spdk = noSpdk ? Optional.empty() : SpdkBuild.fromEnvironment();
        if (spdkTarget) {
            if (spdk.isEmpty()) {
                System.err.println("--spdk-target needs an SPDK build: set RDMA4J_SPDK=DIR (see perf/README.md)");
                return 2;
            }
            target = target == null ? Target.parseTcp("127.0.0.1:4420") : target;
            nqn = nqn == null ? SpdkTarget.NQN : nqn;
        }
        if (target == null || nqn == null) {
            System.err.println(USAGE);
            return 2;
        }
        if (spdk.isPresent() && target.transport() != Target.Transport.TCP) {
            System.out.println("(no SPDK baseline over NVMe/RDMA: the SPDK build is measured over NVMe/TCP only)");
            spdk = Optional.empty();
        }
        SpdkTarget started = spdkTarget ? SpdkTarget.start(spdk.get(), target.port(), 512, 4096, targetCores) : null;
        try {
            List<Row> rows = measureAll(
                    target,
                    nqn,
                    nsid,
                    dev,
                    seconds,
                    warmup,
                    spdk.isEmpty() ? null : new SpdkPerf(spdk.get(), spdkCores),
                    only,
                    polledIo,
                    busyPollMicros,
                    rounds);
            if (json) {
                StringBuilder sb = new StringBuilder("{\"rows\": [");
                for (int i = 0; i < rows.size(); i++) {
                    sb.append(i == 0 ? "" : ", ").append(rows.get(i).json());
                }
                System.out.println(sb.append("]}"));
            }
        } finally {
            if (started != null) {
                started.close();
            }
        }
        return 0;
    }

    private static String value(String[] args, int i) {
        if (i + 1 >= args.length) {
            throw new IllegalArgumentException("option " + args[i] + " needs a value; " + USAGE);
        }
        return args[i + 1];
    }

    private static List<Row> measureAll(
            Target target,
            String nqn,
            long nsid,
            String dev,
            double seconds,
            double warmup,
            SpdkPerf spdk,
            String only,
            boolean polledIo,
            long busyPollMicros,
            int rounds)
            throws Exception {
        List<Workload> workloads = List.of(
                new Workload("4KiB randread QD1", 4096, 1, false, true),
                new Workload("4KiB randread QD32", 4096, 32, false, true),
                new Workload("4KiB randwrite QD1", 4096, 1, true, true),
                new Workload("4KiB randwrite QD32", 4096, 32, true, true),
                new Workload("128KiB read QD8", 131072, 8, false, false),
                new Workload("128KiB write QD8", 131072, 8, true, false),
                new Workload("1MiB read QD8", 1 << 20, 8, false, false),
                new Workload("1MiB write QD8", 1 << 20, 8, true, false));
        if (only != null) {
            workloads = workloads.stream().filter(w -> w.name().contains(only)).toList();
            if (workloads.isEmpty()) {
                throw new IllegalArgumentException("--only " + only + " names no workload; they are: 4KiB randread"
                        + " QD1, 4KiB randread QD32, 4KiB randwrite QD1, 4KiB randwrite QD32, 128KiB read QD8, 128KiB"
                        + " write QD8, 1MiB read QD8, 1MiB write QD8 (any part of a name selects)");
            }
        }
        List<Row> rows = new ArrayList<>();
        try (Arena arena = Arena.ofShared();
                Arena confined = Arena.ofConfined();
                Controller c = Controller.connect(
                        target,
                        nqn,
                        ConnectOptions.defaults()
                                .withIoQueues(4)
                                .withQueueDepth(64)
                                .withPolledIo(polledIo)
                                .withBusyPoll(Duration.ofNanos(busyPollMicros * 1000)));
                PolledQueue polled = target.transport() == Target.Transport.TCP ? c.openPolledQueue(nsid, 64) : null) {
            MemorySegment polledMemory = confined.allocate(32L << 20, 4096);
            long bytes = Math.min(c.namespace(nsid).bytes(), 256L << 20);
            int bs = c.namespace(nsid).blockSize();
            MemorySegment buf = arena.allocate(32L << 20, 4096);
            final long ns = nsid;
            Engine ours = (write, off, size, slot, done) -> {
                MemorySegment b = buf.asSlice((long) slot * size, size);
                (write ? c.write(ns, off / bs, b) : c.read(ns, off / bs, b)).whenComplete((v, t) -> done.accept(t));
            };
            FileChannel kernel = dev == null
                    ? null
                    : FileChannel.open(
                            Path.of(dev),
                            StandardOpenOption.READ,
                            StandardOpenOption.WRITE,
                            com.sun.nio.file.ExtendedOpenOption.DIRECT);
            ByteBuffer[] kbufs = new ByteBuffer[32];
            for (int i = 0; i < kbufs.length; i++) {
                kbufs[i] = ByteBuffer.allocateDirect((1 << 20) + 4096).alignedSlice(4096);
            }
            System.out.printf(
                    "target %s %s namespace %d: %d I/O queues of depth %d, MDTS %d bytes; %.1f s per workload over %d MiB;"
                            + " Controller %s%n",
                    target,
                    nqn,
                    nsid,
                    c.ioQueueCount(),
                    c.queueDepth(),
                    c.maxTransferBytes(),
                    seconds,
                    bytes >> 20,
                    !polledIo
                            ? "on reader and writer threads"
                            : busyPollMicros == 0
                                    ? "queue threads sleep when idle"
                                    : "queue threads busy-poll " + busyPollMicros + " us before sleeping");
            for (Workload w : workloads) {
                measure(w, ours, bytes, warmup, false); // JIT and connection warm-up, not counted
                Figures r = measure(w, ours, bytes, seconds, false).figures(w.size());
                System.out.printf("%-22s rdma4j  %s%n", w.name(), r.line());
                Figures pq = null;
                NvmePolledLoop loop = null;
                if (polled != null) {
                    loop = new NvmePolledLoop(polled, polledMemory, w.size(), w.qd(), w.write(), w.random(), bytes);
                    loop.run(warmup);
                    pq = loop.run(seconds).figures(w.size());
                    System.out.printf("%-22s polled  %s%n", w.name(), pq.line());
                }
                Figures s = null;
                List<Double> ratios = new ArrayList<>();
                List<Double> controllerRatios = new ArrayList<>();
                if (spdk != null) {
                    SpdkPerf.Report p = spdk(spdk, target, nqn, nsid, w, seconds, warmup);
                    s = new Figures(p.iops(), p.iops() * w.size() / 1e6, p.p50Us(), p.p99Us());
                    System.out.printf(
                            "%-22s SPDK    %s  avg %7.1f us  (rdma4j/SPDK IOPS %.2f, polled/SPDK %s)%n",
                            w.name(),
                            s.line(),
                            p.averageUs(),
                            r.iops() / s.iops(),
                            pq == null ? "-" : String.format(Locale.ROOT, "%.2f", pq.iops() / s.iops()));
                    if (loop != null && rounds > 1) {
                        controllerRatios.add(r.iops() / s.iops());
                        ratios.add(pq.iops() / s.iops());
                        for (int k = 2; k <= rounds; k++) {
                            double controller = measure(w, ours, bytes, seconds, false)
                                    .figures(w.size())
                                    .iops();
                            double mine = loop.run(seconds).figures(w.size()).iops();
                            double theirs = spdk(spdk, target, nqn, nsid, w, seconds, warmup)
                                    .iops();
                            controllerRatios.add(controller / theirs);
                            ratios.add(mine / theirs);
                            System.out.printf(
                                    "%-22s round %d: rdma4j %10.0f IOPS, polled %10.0f IOPS, SPDK %10.0f IOPS,"
                                            + " rdma4j/SPDK %.2f, polled/SPDK %.2f%n",
                                    w.name(), k, controller, mine, theirs, controller / theirs, mine / theirs);
                        }
                        printMedian(w, "rdma4j/SPDK", controllerRatios);
                        printMedian(w, "polled/SPDK", ratios);
                    }
                }
                Figures k = null;
                if (kernel != null) {
                    Engine k0 = (write, off, size, slot, done) -> {
                        ByteBuffer b = kbufs[slot].duplicate().limit(size);
                        while (b.hasRemaining()) {
                            int n = write ? kernel.write(b, off + b.position()) : kernel.read(b, off + b.position());
                            if (n < 0) {
                                throw new IllegalStateException("end of device");
                            }
                        }
                        done.accept(null);
                    };
                    measure(w, k0, bytes, warmup, true);
                    k = measure(w, k0, bytes, seconds, true).figures(w.size());
                    System.out.printf(
                            "%-22s kernel  %s  (rdma4j/kernel IOPS %.2f)%n", w.name(), k.line(), r.iops() / k.iops());
                }
                rows.add(new Row(w, r, pq, s, k, controllerRatios, ratios));
            }
            if (kernel != null) {
                kernel.close();
            } else if (spdk == null) {
                System.out.println("(no baseline: set RDMA4J_SPDK to an SPDK build for spdk_nvme_perf, or connect the"
                        + " kernel initiator with nvme connect -t tcp|rdma ... and pass its block device as"
                        + " --kernel-dev)");
            }
        }
        return rows;
    }

    private static SpdkPerf.Report spdk(
            SpdkPerf spdk, Target target, String nqn, long nsid, Workload w, double seconds, double warmup)
            throws Exception {
        return spdk.run(
                target, nqn, nsid, w.spdkPattern(), w.size(), w.qd(), (int) Math.max(1, Math.ceil(seconds)), (int)
                        Math.ceil(warmup));
    }

    /** Keeps w.qd() I/Os outstanding for {@code seconds}; synchronous engines get one thread per slot. */
    private static Result measure(Workload w, Engine e, long bytes, double seconds, boolean threaded) throws Exception {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long slots = bytes / w.size();
        AtomicLong ops = new AtomicLong();
        AtomicLong seq = new AtomicLong();
        List<long[]> lats = new ArrayList<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        long t0 = System.nanoTime();
        if (threaded) {
            CountDownLatch doneAll = new CountDownLatch(w.qd());
            for (int s = 0; s < w.qd(); s++) {
                int slot = s;
                long[] lat = new long[200_000];
                lats.add(lat);
                Thread.ofPlatform().start(() -> {
                    SplittableRandom rnd = new SplittableRandom(slot);
                    int n = 0;
                    try {
                        while (System.nanoTime() < end) {
                            long off = (w.random() ? rnd.nextLong(slots) : seq.getAndIncrement() % slots) * w.size();
                            long a = System.nanoTime();
                            e.io(w.write(), off, w.size(), slot, t -> {});
                            if (n < lat.length) {
                                lat[n++] = System.nanoTime() - a;
                            }
                            ops.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        failed.set(t);
                    } finally {
                        lats.set(slot, Arrays.copyOf(lat, n));
                        doneAll.countDown();
                    }
                });
            }
            doneAll.await();
        } else {
            // w.qd() chains, each sending its next I/O from the completion callback of the one before (on the
            // queue's thread), as spdk_nvme_perf and NvmePolledLoop do
            long[] lat = new long[1_000_000];
            AtomicLong n = new AtomicLong();
            CountDownLatch chains = new CountDownLatch(w.qd());
            Chain chain = new Chain(w, e, slots, end, seq, lat, n, ops, failed, chains);
            for (int s = 0; s < w.qd(); s++) {
                chain.next(s);
            }
            if (!chains.await((long) (seconds * 1e9) + TimeUnit.SECONDS.toNanos(60), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException(w.name() + ": " + chains.getCount() + " of " + w.qd()
                        + " I/O chains still running a minute past the end: an I/O never completed");
            }
            lats.add(Arrays.copyOf(lat, (int) Math.min(n.get(), lat.length)));
        }
        if (failed.get() != null) {
            throw new IllegalStateException(w.name() + " failed", failed.get());
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        return new Result(
                ops.get(), secs, lats.stream().flatMapToLong(Arrays::stream).toArray());
    }
    /** I/O chains on an asynchronous engine: each completion records its latency and sends that slot's next I/O. */
    private record Chain(
            Workload w,
            Engine e,
            long slots,
            long end,
            AtomicLong seq,
            long[] lat,
            AtomicLong n,
            AtomicLong ops,
            AtomicReference<Throwable> failed,
            CountDownLatch chains) {
        void next(int slot) {
            if (System.nanoTime() >= end || failed.get() != null) {
                chains.countDown();
                return;
            }
            long off = (w.random() ? ThreadLocalRandom.current().nextLong(slots) : seq.getAndIncrement() % slots)
                    * w.size();
            long a = System.nanoTime();
            try {
                e.io(w.write(), off, w.size(), slot, t -> {
                    if (t != null) {
                        failed.compareAndSet(null, t);
                    }
                    long i = n.getAndIncrement();
                    if (i < lat.length) {
                        lat[(int) i] = System.nanoTime() - a;
                    }
                    ops.incrementAndGet();
                    next(slot);
                });
            } catch (Exception x) {
                failed.compareAndSet(null, x);
                chains.countDown();
            }
        }
    }
}
