package io.rdma4j.perf.soak;

import io.rdma4j.cli.MetricsEndpoint;
import io.rdma4j.engine.spi.FaultInjectingBackend;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ./rdma4j soak [--minutes N | --seconds N] [--seed N]}: the chaos soak ({@link SoakRun}). Its last lines give
 * the faults injected, transfers completed, failed by cause, and hung (must be 0), bytes verified and corrupt (must be
 * 0), each process's resources before and after the faults (must not grow), and p50 and p99 latency per kind of
 * operation. Exits 0 when all three hold, 1 otherwise, 2 on bad arguments.
 */
public final class Soak {
    static final String USAGE = "usage: ./rdma4j soak [--minutes N | --seconds N] [--seed N] [--metrics-port P]"
            + "  (default 10 minutes; N may have decimals)";

    private Soak() {}

    public static void main(String[] args) throws Exception {
        Duration duration = Duration.ofMinutes(10);
        long seed = System.nanoTime();
        int metricsPort = -1;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--minutes" -> duration = seconds(60 * Double.parseDouble(value(args, i++)));
                    case "--seconds" -> duration = seconds(Double.parseDouble(value(args, i++)));
                    case "--seed" -> seed = Long.parseLong(value(args, i++));
                    case "--metrics-port" -> metricsPort = MetricsEndpoint.port(value(args, i++));
                    case "-h", "--help" -> {
                        System.out.println(USAGE);
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("rdma4j soak: " + e.getMessage() + "; " + USAGE);
            System.exit(2);
        }
        System.out.printf(
                Locale.ROOT,
                "soak: %s of faults (seed %d): engines over shm and tcp across processes, NVMe/TCP checkpoints%n",
                human(duration),
                seed);
        boolean pass;
        // this process's engines publish their meters there for the whole run (the peers' are their own)
        try (MetricsEndpoint metrics =
                metricsPort < 0 ? null : MetricsEndpoint.start(metricsPort, "soak", System.out)) {
            SoakRun.Result r = new SoakRun(duration, seed, metrics == null ? null : metrics.registry()).run();
            pass = report(r, System.out);
        }
        System.exit(pass ? 0 : 1);
    }

    private static Duration seconds(double s) {
        if (!(s > 0)) {
            throw new IllegalArgumentException("the duration must be positive, got " + s + " s");
        }
        return Duration.ofMillis((long) (s * 1000));
    }

    private static String value(String[] args, int i) {
        if (i + 1 >= args.length) {
            throw new IllegalArgumentException(args[i] + " needs a value");
        }
        return args[i + 1];
    }

    static String human(Duration d) {
        long s = d.toSeconds();
        return s >= 60 ? String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60) : s + " s";
    }

    /** Prints the soak's last lines; {@return whether it passed: 0 hung, 0 corrupt bytes, no growth, no anomaly} */
    static boolean report(SoakRun.Result r, PrintStream out) {
        Ledger l = r.ledger();
        List<String> problems = new ArrayList<>(r.errors());
        out.printf("soak: ran %s; the child processes' stderr is in %s%n", human(r.ran()), r.logs());
        out.println("faults injected:");
        long laneOps = r.backends().stream()
                .mapToLong(FaultInjectingBackend::injectedFailures)
                .sum();
        for (Chaos.Fault f : Chaos.Fault.values()) {
            String more = switch (f) {
                case LANE_FAILURE -> " (" + laneOps + " posts and completions failed)";
                case DEADLINE_STORM, CANCEL_STORM -> " (" + Traffic.STORM_BURST + " transfers each)";
                case NVME_TARGET_KILL ->
                    String.format(
                            " requested; %d killed: %d manifests never written, %d previous versions restored intact",
                            r.checkpoints().killed(),
                            r.checkpoints().manifestsAbsent(),
                            r.checkpoints().previousIntact());
                default -> "";
            };
            out.printf(
                    Locale.ROOT,
                    "  %-40s %6d%s%n",
                    f.label,
                    r.chaos() == null ? 0 : r.chaos().injected(f),
                    more);
        }
        if (r.chaos() != null) {
            r.chaos().errors().forEach(e -> problems.add("fault injection failed: " + e));
        }
        Checkpoints c = r.checkpoints();
        if (c != null) {
            c.anomalies().forEach(a -> problems.add("nvme: " + a));
            if (c.killed() != c.manifestsAbsent() || c.killed() != c.previousIntact()) {
                problems.add("nvme: of " + c.killed() + " interrupted checkpoints, " + c.manifestsAbsent()
                        + " left no manifest and " + c.previousIntact() + " kept the previous version intact");
            }
        }
        out.printf("nvme checkpoints written and restored: %d%n", c == null ? 0 : c.written());
        Map<String, Long> lookups = l.lookupFailures();
        if (!lookups.isEmpty()) {
            out.println("peer look-ups that failed (retried; not transfers):");
            lookups.forEach(
                    (k, v) -> out.printf(Locale.ROOT, "  %-40s %8d  e.g. %s%n", k, v, l.sample("lookup: " + k)));
        }
        out.println("latency per operation       p50 µs     p99 µs   completed");
        for (Ledger.Kind k : Ledger.Kind.values()) {
            Latencies lat = l.latencies(k);
            out.printf(
                    Locale.ROOT,
                    "  %-22s %10d %10d %11d%n",
                    k.label(),
                    lat.percentile(50),
                    lat.percentile(99),
                    lat.count());
        }
        out.printf(
                Locale.ROOT,
                "resources, before the faults and after them (traffic paused; growth allowed: %d fds, %d threads,"
                        + " %d MiB native; RSS shown only)%n",
                Resources.FD_SLACK,
                Resources.THREAD_SLACK,
                Resources.NATIVE_SLACK_KB >> 10);
        for (SoakRun.Measured m : r.resources()) {
            String grew = m.end().grew(m.start());
            out.printf(
                    Locale.ROOT,
                    "  %-20s fds %d -> %d, threads %d -> %d, native %s -> %s, RSS %d -> %d MiB%s%n",
                    m.process(),
                    m.start().fds(),
                    m.end().fds(),
                    m.start().threads(),
                    m.end().threads(),
                    kib(m.start().nativeKb()),
                    kib(m.end().nativeKb()),
                    m.start().rssKb() >> 10,
                    m.end().rssKb() >> 10,
                    grew.isEmpty() ? "" : "  GREW: " + grew);
            if (!grew.isEmpty()) {
                problems.add(m.process() + " grew: " + grew);
            }
        }
        if (r.resources().isEmpty()) {
            problems.add("resources were not measured (the soak ended before its warm-up did)");
        }
        out.printf("transfers completed: %d%n", l.completed());
        out.printf("transfers failed with a named cause: %d%n", l.failed());
        l.causes().forEach((k, v) -> out.printf(Locale.ROOT, "  %-40s %8d  e.g. %s%n", k, v, l.sample(k)));
        out.printf(
                "transfers that did not end by their deadline (+%d s grace): %d%n", Ledger.GRACE.toSeconds(), l.hung());
        out.printf(Locale.ROOT, "bytes verified: %d (%.2f GiB)%n", l.verifiedBytes(), l.verifiedBytes() / 1073741824.0);
        out.printf("corrupt bytes: %d%n", l.corruptBytes());
        l.corruptions().forEach((k, v) -> out.println("  corrupt: " + k + ": " + v));
        problems.forEach(p -> out.println("  problem: " + p));
        boolean pass = l.hung() == 0 && l.corruptBytes() == 0 && problems.isEmpty();
        out.printf(
                "soak: %s: %d hung, %d corrupt bytes, %s%n",
                pass ? "PASS" : "FAIL",
                l.hung(),
                l.corruptBytes(),
                problems.isEmpty() ? "no resource growth" : problems.size() + " problem(s) above");
        return pass;
    }

    private static String kib(long kb) {
        return kb < 0 ? "n/a (no -XX:NativeMemoryTracking)" : kb + " KiB";
    }
}
