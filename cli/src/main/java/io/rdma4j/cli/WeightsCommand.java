package io.rdma4j.cli;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.Closeables;
import io.rdma4j.Rdma4jException;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferTimeoutException;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.weights.PublishResult;
import io.rdma4j.weights.Safetensors;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.TensorSet;
import io.rdma4j.weights.WeightPublisher;
import io.rdma4j.weights.WeightSubscriber;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./rdma4j weights}: RL weight sync between processes. {@code publish} serves a safetensors file's tensors,
 * {@code subscribe} receives them into a safetensors file, and {@code demo} runs a trainer and N workers as processes
 * and verifies several resharded versions byte for byte.
 */
final class WeightsCommand implements Command {
    static final String USAGE = """
            usage: ./rdma4j weights publish --safetensors FILE --name NAME [--rendezvous HOST:PORT | --port 7777]
                                            [--provider shm] [--metrics-port P]
                   ./rdma4j weights subscribe --from NAME --out FILE.safetensors [--version N]
                                              [--rendezvous HOST:PORT] [--provider shm] [--timeout 60]
                                              [--metrics-port P] [--no-progress] [--progress-every SECONDS]
                   ./rdma4j weights demo [--workers 2] [--versions 4] [--size 64m] [--provider shm]
                                         [--no-progress] [--progress-every SECONDS]
              publish      map FILE and publish its tensors as version 1 from an engine named NAME; serve every
                           subscriber that joins until killed. Without --rendezvous it runs a directory on loopback
                           port --port (default 7777; 0 picks a free one) and says where
              subscribe    join the publisher NAME, wait up to --timeout seconds for version N or newer (default 1),
                           write it to FILE (same tensor names, dtypes, shapes and bytes) and exit
                           (--rendezvous default 127.0.0.1:7777); the bytes of the version landing show on stderr
                           as the demo's do
              demo         a trainer process (two ranks, TP 2) and N worker processes; even workers need the tensors
                           whole, odd ones split along the other dimension; syncs --versions versions of --size bytes
                           of generated tensors and checks every byte in every worker; its progress (bytes
                           the workers received and verified) goes to stderr: a bar on a terminal, else a line
                           every --progress-every seconds (10)
              --provider   libfabric provider: shm (default) or tcp (kept on loopback)
              --metrics-port  serve the engine's meters (and publish's directory's) for Prometheus at
                           http://127.0.0.1:P/metrics while the command runs (0 picks a free port)
            """;

    /** Bad usage: the message and the usage go to stderr, the exit status is 2. */
    private static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    @Override
    public String name() {
        return "weights";
    }

    @Override
    public String summary() {
        return "RL weight sync: publish/subscribe a .safetensors file, demo with N worker processes";
    }

    @Override
    public int run(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            if (args.length == 0) {
                System.err.print(USAGE);
                return 2;
            }
            System.out.print(USAGE);
            return 0;
        }
        try {
            ProgressOptions progress = ProgressOptions.OFF;
            if (args[0].equals("demo") || args[0].equals("subscribe")) {
                List<String> rest = new ArrayList<>(List.of(args));
                try {
                    progress = ProgressOptions.take(rest);
                } catch (IllegalArgumentException e) {
                    throw new UsageException(e.getMessage());
                }
                args = rest.toArray(String[]::new);
            }
            Map<String, String> o = options(args);
            if (o.containsKey("--help")) {
                System.out.print(USAGE);
                return 0;
            }
            return switch (args[0]) {
                case "publish" -> publish(o, System.out);
                case "subscribe" -> subscribe(o, System.out, progress);
                case "demo" -> demo(o, System.out, progress);
                default -> throw new UsageException("unknown subcommand '" + args[0] + "'");
            };
        } catch (UsageException e) {
            System.err.println("rdma4j weights: " + e.getMessage());
            System.err.print(USAGE);
            return 2;
        }
    }

    private static final Map<String, List<String>> OPTIONS = Map.of(
            "publish", List.of("--safetensors", "--name", "--rendezvous", "--port", "--provider", "--metrics-port"),
            "subscribe",
                    List.of(
                            "--from",
                            "--out",
                            "--version",
                            "--rendezvous",
                            "--provider",
                            "--timeout",
                            "--metrics-port"),
            "demo", List.of("--workers", "--versions", "--size", "--provider"));

    private static Map<String, String> options(String[] args) {
        List<String> known = OPTIONS.get(args[0]);
        if (known == null) {
            throw new UsageException("unknown subcommand '" + args[0] + "': use publish, subscribe or demo");
        }
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                o.put("--help", "");
                return o;
            }
            if (!known.contains(a)) {
                throw new UsageException("unknown option '" + a + "' for " + args[0]);
            }
            if (i + 1 >= args.length) {
                throw new UsageException(a + " needs a value");
            }
            o.put(a, args[++i]);
        }
        o.put("command", args[0]);
        return o;
    }

    private static String required(Map<String, String> o, String key) {
        String v = o.get(key);
        if (v == null || v.isEmpty()) {
            throw new UsageException(o.get("command") + " needs " + key);
        }
        return v;
    }

    private static long number(Map<String, String> o, String key, long def, long min, long max) {
        String v = o.get(key);
        if (v == null) {
            return def;
        }
        long n;
        try {
            n = key.equals("--size") ? DemoCommand.parseSize(v) : Long.parseLong(v);
        } catch (RuntimeException e) {
            throw new UsageException(key + " takes a number, got '" + v + "'");
        }
        if (n < min || n > max) {
            throw new UsageException(key + " must be between " + min + " and " + max + ", got " + v);
        }
        return n;
    }

    private static String provider(Map<String, String> o) {
        String p = o.getOrDefault("--provider", "shm");
        if (!p.equals("shm") && !p.equals("tcp")) {
            throw new UsageException("--provider must be shm or tcp, got '" + p + "'");
        }
        return p;
    }

    /** Publishes the file as version 1 and serves late joiners until the process is stopped. */
    private static int publish(Map<String, String> o, PrintStream out) throws Exception {
        Path file = Path.of(required(o, "--safetensors"));
        String name = required(o, "--name");
        String rendezvous = o.get("--rendezvous");
        int port = (int) number(o, "--port", 7777, 0, 65535);
        String provider = provider(o);
        if (rendezvous != null && o.containsKey("--port")) {
            throw new UsageException("--rendezvous and --port exclude each other: --port runs a directory here");
        }
        if (!Files.isRegularFile(file)) {
            throw new Rdma4jException("no file " + file + ": pass a .safetensors file to --safetensors");
        }
        Libfabric.ensureAvailable();
        MetricsEndpoint metrics = metrics(o, out);
        MeterRegistry registry = metrics == null ? null : metrics.registry();
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(
                () -> {
                    stop.countDown();
                    try {
                        stopped.await(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "rdma4j-weights-publish-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        DirectoryServer directory = null;
        try (Safetensors.MappedFile mapped = Safetensors.open(file)) {
            if (rendezvous == null) {
                directory = DirectoryServer.builder()
                        .port(port)
                        .meterRegistry(registry)
                        .start();
                rendezvous = directory.target();
                out.println("rdma4j weights: rendezvous directory on " + directory.description());
            }
            TensorSet set = mapped.tensors();
            try (TransferEngine engine = DemoCommand.engine(name, provider, rendezvous, 2, 1 << 20, registry);
                    WeightPublisher pub = WeightPublisher.builder(engine, set).build()) {
                PublishResult first = pub.publish(1);
                out.printf(
                        "rdma4j weights: %s publishes %d tensor(s), %s, of %s as version 1 over %s; serving until"
                                + " stopped%n",
                        name, set.size(), DemoCommand.bytes(set.byteSize()), file, provider);
                out.printf(
                        "  subscribe with: ./rdma4j weights subscribe --from %s --rendezvous %s --provider %s --out"
                                + " FILE.safetensors%n",
                        name, rendezvous, provider);
                report(first, out);
                out.flush();
                while (!stop.await(50, TimeUnit.MILLISECONDS)) {
                    report(pub.catchUp(), out);
                }
            }
        } finally {
            Closeables.closeAll(directory, metrics);
            stopped.countDown();
        }
        return 0;
    }

    /** {@return the endpoint {@code --metrics-port} asks for, started; null without it} */
    private static MetricsEndpoint metrics(Map<String, String> o, PrintStream out) {
        if (!o.containsKey("--metrics-port")) {
            return null;
        }
        return MetricsEndpoint.start((int) number(o, "--metrics-port", 0, 0, 65535), "rdma4j weights", out);
    }

    private static void report(PublishResult r, PrintStream out) {
        for (PublishResult.Outcome x : r.outcomes()) {
            out.printf(
                    "  version %d to %s: %s in %.3f s%s%n",
                    r.version(),
                    x.subscriber(),
                    x.status().toString().toLowerCase(java.util.Locale.ROOT),
                    r.nanos() / 1e9,
                    x.reason() == null ? "" : " (" + x.reason() + ")");
        }
        out.flush();
    }

    /** Receives a version and writes it as a safetensors file. */
    private static int subscribe(Map<String, String> o, PrintStream out, ProgressOptions progressOptions)
            throws Exception {
        String from = required(o, "--from");
        Path file = Path.of(required(o, "--out"));
        long version = number(o, "--version", 1, 1, (1L << 31) - 1);
        long timeout = number(o, "--timeout", 60, 1, 86_400);
        String rendezvous = o.getOrDefault("--rendezvous", "127.0.0.1:7777");
        String provider = provider(o);
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new Rdma4jException("no directory " + parent + " to write " + file.getFileName() + " in");
        }
        Libfabric.ensureAvailable();
        String me = "weights-sub-" + ProcessHandle.current().pid();
        WeightSubscriber[] opened = new WeightSubscriber[1];
        try (MetricsEndpoint metrics = metrics(o, out);
                TransferEngine engine = DemoCommand.engine(
                        me, provider, rendezvous, 2, 1 << 20, metrics == null ? null : metrics.registry());
                WeightSubscriber sub = opened[0] = WeightSubscriber.builder(engine, List.of(from))
                        .joinTimeout(Duration.ofSeconds(timeout))
                        .build();
                WeightSubscriber.Lease lease = await(sub, version, Duration.ofSeconds(timeout), progressOptions)) {
            TensorSet got = lease.tensors();
            Safetensors.write(file, got);
            out.printf(
                    "rdma4j weights: version %d from %s: %d tensor(s), %s, written to %s%n",
                    lease.version(), from, got.size(), DemoCommand.bytes(got.byteSize()), file);
        } finally {
            // after close, which waits for the confirmation of the version on its way: say if a control write was lost
            WeightSubscriber sub = opened[0];
            if (sub != null && sub.controlWriteFailures() > 0) {
                System.err.printf(
                        "rdma4j weights subscribe: %d control write(s) to %s failed (the publisher may count this"
                                + " subscriber failed); the last %s%n",
                        sub.controlWriteFailures(), from, sub.lastControlWriteFailure());
            }
            // pieces that landed but did not count: a version that took long shows here whether its pieces came
            if (sub != null && (sub.staleNotifications() > 0 || sub.checksumMismatches() > 0)) {
                System.err.printf(
                        "rdma4j weights subscribe: %d notification(s) from %s ignored as stale (an old plan, epoch or"
                                + " version) and %d piece(s) failed their checksum%n",
                        sub.staleNotifications(), from, sub.checksumMismatches());
            }
        }
        return 0;
    }

    /**
     * Waits for {@code version} or newer, reporting the bytes of the version landing (a first line at 0% when lines are
     * due at once, so a wait for the publisher shows).
     */
    private static WeightSubscriber.Lease await(
            WeightSubscriber sub, long version, Duration timeout, ProgressOptions options) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Progress progress = Progress.start("weights subscribe", sub.bytesPerVersion(), options)) {
            progress.add(0);
            while (true) {
                long left = deadline - System.nanoTime();
                try {
                    WeightSubscriber.Lease lease =
                            sub.awaitVersion(version, Duration.ofNanos(Math.max(1, Math.min(left, 200_000_000L))));
                    progress.set(sub.bytesPerVersion());
                    return lease;
                } catch (TransferTimeoutException e) {
                    if (System.nanoTime() - deadline >= 0) {
                        throw e;
                    }
                }
                if (sub.versionLanding() >= version) {
                    progress.set(sub.bytesLanded());
                }
            }
        }
    }

    /** A child process of the demo and the lines it says. */
    private record Child(String label, Process process, BlockingQueue<String> lines, PrintStream stdin) {
        String next(String expecting) throws InterruptedException {
            String l = lines.poll(300, TimeUnit.SECONDS);
            if (l == null) {
                throw new Rdma4jException(label + " said nothing for 300 s while the demo waited for " + expecting);
            }
            if (l.equals("EOF")) {
                throw new Rdma4jException(label + " exited"
                        + (process.isAlive() ? "" : " with status " + process.exitValue()) + " before saying "
                        + expecting + "; its errors are printed above");
            }
            return l;
        }
    }

    private static Child start(String label, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("--sun-misc-unsafe-memory-access=allow");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(WeightsDemoProcess.class.getName());
        cmd.addAll(args);
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
                // gone: EOF says so
            }
            lines.add("EOF");
        });
        return new Child(label, p, lines, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8));
    }

    private static int demo(Map<String, String> o, PrintStream out, ProgressOptions progress) throws Exception {
        int workers = (int) number(o, "--workers", 2, 1, 16);
        int versions = (int) number(o, "--versions", 4, 1, 1000);
        long size = number(o, "--size", 64L << 20, 64L << 10, 16L << 30);
        String provider = provider(o);
        Libfabric.ensureAvailable();
        long pid = ProcessHandle.current().pid();
        String trainers = "weights-demo-" + pid + "-trainer-0,weights-demo-" + pid + "-trainer-1";
        long[] need = new long[workers];
        for (int w = 0; w < workers; w++) {
            for (int t = 0; t < WeightsDemoData.NAMES.length; t++) {
                long[] full = WeightsDemoData.shape(t, size);
                need[w] += Tensor.byteSize(
                        WeightsDemoData.TYPES[t],
                        WeightsDemoData.need(w, t, size).shape(full));
            }
        }
        long model = 0;
        for (int t = 0; t < WeightsDemoData.NAMES.length; t++) {
            model += Tensor.byteSize(WeightsDemoData.TYPES[t], WeightsDemoData.shape(t, size));
        }
        out.printf(
                "rdma4j weights demo: a trainer process (2 ranks, TP 2 along dim 0) and %d worker process(es) over %s,"
                        + " %d tensors of %s in all, %d version(s)%n",
                workers, provider, WeightsDemoData.NAMES.length, DemoCommand.bytes(model), versions);
        List<Child> children = new ArrayList<>();
        boolean ok;
        try (DirectoryServer directory = DirectoryServer.builder().port(0).start()) {
            try {
                ok = demo(
                        directory.target(), workers, versions, size, provider, trainers, need, children, out, progress);
            } finally {
                // before the directory closes: the children withdraw their buffers from it
                stopAll(children);
            }
        }
        return ok ? 0 : 1;
    }

    private static void stopAll(List<Child> children) throws InterruptedException {
        for (Child c : children) {
            c.stdin().close();
        }
        for (Child c : children) {
            if (!c.process().waitFor(10, TimeUnit.SECONDS)) {
                c.process().destroyForcibly();
            }
        }
    }

    private static boolean demo(
            String dir,
            int workers,
            int versions,
            long size,
            String provider,
            String trainers,
            long[] need,
            List<Child> children,
            PrintStream out,
            ProgressOptions progressOptions)
            throws Exception {
        boolean ok = true;
        long pid = ProcessHandle.current().pid();
        for (int w = 0; w < workers; w++) {
            children.add(start(
                    "worker " + w,
                    List.of(
                            "worker",
                            dir,
                            provider,
                            Long.toString(size),
                            Integer.toString(w),
                            "weights-demo-" + pid + "-worker-" + w,
                            trainers)));
            out.printf(
                    "  worker %d needs %s: %s%n",
                    w,
                    DemoCommand.bytes(need[w]),
                    w % 2 == 0
                            ? "every tensor whole (gathered from both ranks)"
                            : "half of dim 1 of each tensor (resharded: rows from both ranks, columns "
                                    + (w / 2 % 2 == 0 ? "first" : "second") + " half)");
        }
        Child trainer = start(
                "the trainer",
                List.of("trainer", dir, provider, Long.toString(size), Integer.toString(workers), trainers));
        for (int w = 0; w < workers; w++) {
            String l = children.get(w).next("JOINED");
            if (!l.equals("JOINED")) {
                throw new Rdma4jException("worker " + w + " said '" + l + "' where JOINED was expected");
            }
        }
        children.add(trainer);
        for (String l; !(l = trainer.next("READY")).equals("READY"); ) {
            if (!l.startsWith("PLAN ")) {
                throw new Rdma4jException("the trainer said '" + l + "' where READY was expected");
            }
            out.println("  " + l.substring(5));
        }
        double totalSeconds = 0;
        long perVersion = 0;
        for (long n : need) {
            perVersion += n;
        }
        try (Progress progress = Progress.start("weights demo", perVersion * versions, progressOptions)) {
            for (int v = 1; v <= versions; v++) {
                trainer.stdin().println("PUBLISH " + v);
                String[] p = trainer.next("PUBLISHED " + v).split(" ", 6);
                if (!p[0].equals("PUBLISHED") || p.length < 6 || !p[1].equals(Integer.toString(v))) {
                    throw new Rdma4jException("the trainer said '" + String.join(" ", p) + "' after PUBLISH " + v);
                }
                double seconds = Long.parseLong(p[2]) / 1e9;
                totalSeconds += seconds;
                long moved = Long.parseLong(p[3]);
                int synced = Integer.parseInt(p[4]);
                List<String> verdicts = new ArrayList<>();
                for (int w = 0; w < workers && synced == workers; w++) {
                    String l = children.get(w).next("OK " + v);
                    if (!l.equals("OK " + v + " " + need[w])) {
                        ok = false;
                        verdicts.add("worker " + w + ": " + l);
                    }
                }
                if (synced != workers) {
                    ok = false;
                    verdicts.add(synced + " of " + workers + " synced: " + p[5]);
                }
                progress.add(perVersion);
                progress.println(
                        out,
                        String.format(
                                "  version %d: %.3f s, %s written (trainer and relays), %s",
                                v,
                                seconds,
                                DemoCommand.bytes(moved),
                                verdicts.isEmpty()
                                        ? "every byte verified by all " + workers + " worker(s)"
                                        : "FAILED: " + String.join("; ", verdicts)));
                if (!ok) {
                    break;
                }
            }
        }
        out.println(
                ok
                        ? String.format(
                                "verified: %d version(s) x %d worker(s), every byte of each worker's part"
                                        + " (whole or resharded) matched; %.3f s of sync in all",
                                versions, workers, totalSeconds)
                        : "VERIFICATION FAILED: see above");
        return ok;
    }
}
