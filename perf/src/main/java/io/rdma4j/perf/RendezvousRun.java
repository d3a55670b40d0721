package io.rdma4j.perf;

import io.rdma4j.rendezvous.etcd.LocalEtcdCluster;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * {@code ./rdma4j bench rendezvous [--peers 1000] [--buffers 10000] [--seconds 1.5] [--threads 1,4] [--etcd-members
 * 3]}: populates a directory over loopback TCP (eight announcing threads), then measures resolve and lookup throughput
 * and latency percentiles per thread count in three rotated rounds, next to the baseline measured in the same rounds: a
 * bare gRPC echo round trip of the same size. Where etcd is installed, a second directory keeping its state in a local
 * etcd cluster is populated alike and measured in the same rounds ({@code --etcd-members 0} leaves it out).
 */
final class RendezvousRun implements BenchRun {
    @Override
    public String name() {
        return "rendezvous";
    }

    @Override
    public String summary() {
        return "directory resolve/lookup with 1,000 peers and 10,000 buffers, in memory and on etcd, vs a bare gRPC"
                + " round trip";
    }

    private record Result(String what, int threads, long ops, double seconds, long[] latenciesNanos) {
        double opsPerSecond() {
            return ops / seconds;
        }

        double percentileMicros(double p) {
            if (latenciesNanos.length == 0) {
                return Double.NaN;
            }
            return latenciesNanos[Math.min(latenciesNanos.length - 1, (int) (p * latenciesNanos.length))] / 1000.0;
        }
    }

    @Override
    public int run(String[] args) throws Exception {
        int peers = 1000;
        int buffers = 10_000;
        double seconds = 1.5;
        int[] threads = {1, 4};
        int etcdMembers = 3;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--peers" -> peers = Integer.parseInt(args[i + 1]);
                case "--buffers" -> buffers = Integer.parseInt(args[i + 1]);
                case "--etcd-members" -> etcdMembers = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Double.parseDouble(args[i + 1]);
                case "--threads" ->
                    threads = Arrays.stream(args[i + 1].split(","))
                            .mapToInt(Integer::parseInt)
                            .toArray();
                default -> {
                    System.err.println("unknown option " + args[i]
                            + "; options: --peers N --buffers N --seconds S --threads 1,4" + " --etcd-members N");
                    return 2;
                }
            }
        }
        String etcdMissing = etcdMembers == 0 ? "--etcd-members 0" : LocalEtcdCluster.unavailabilityCause();
        try (RendezvousFixture f = new RendezvousFixture(peers, buffers);
                LocalEtcdCluster etcd = etcdMissing == null
                        ? LocalEtcdCluster.start(Files.createTempDirectory("rdma4j-bench-etcd-"), etcdMembers)
                        : null;
                RendezvousFixture e = etcd == null ? null : new RendezvousFixture(peers, buffers, etcd.url())) {
            System.out.printf(
                    "populated %d peers (4 lanes each) and %d buffers over loopback TCP in %.2f s (%.0f calls/s from 8 threads)%n",
                    peers, buffers, f.populateNanos / 1e9, (peers + buffers) / (f.populateNanos / 1e9));
            List<String> names =
                    new ArrayList<>(List.of("baseline: bare gRPC echo", "resolve(peer)", "lookup(buffer)"));
            List<IntFunction<Object>> calls = new ArrayList<>(List.of(i -> f.echo(), f::resolve, f::lookup));
            if (e != null) {
                System.out.printf(
                        "populated the same into a directory on %d local etcd members in %.2f s (%.0f calls/s)%n",
                        etcdMembers, e.populateNanos / 1e9, (peers + buffers) / (e.populateNanos / 1e9));
                names.addAll(List.of("resolve(peer) etcd", "lookup(buffer) etcd"));
                calls.addAll(List.of(e::resolve, e::lookup));
            } else {
                System.out.println("no etcd-backed directory: " + etcdMissing);
            }
            // warm up every path once so the first measurement is not the JIT's
            for (IntFunction<Object> c : calls) {
                measure("warmup", 2, Math.min(1.0, seconds), c);
            }
            // Rounds rotate the order of the calls so drift on a shared machine does not favour one; each row reports
            // the median-throughput round and the latencies of all rounds.
            List<Result> results = new ArrayList<>();
            int k = calls.size();
            for (int t : threads) {
                List<List<Result>> rounds = new ArrayList<>();
                for (int c = 0; c < k; c++) {
                    rounds.add(new ArrayList<>());
                }
                for (int round = 0; round < ROUNDS; round++) {
                    for (int j = 0; j < k; j++) {
                        int c = (j + round) % k;
                        rounds.get(c).add(measure(names.get(c), t, seconds, calls.get(c)));
                    }
                }
                for (List<Result> r : rounds) {
                    results.add(median(r));
                }
            }
            System.out.printf(
                    "%n%-26s %7s %12s %10s %10s %10s %12s%n",
                    "call", "threads", "ops/s", "p50 us", "p99 us", "p99.9 us", "vs baseline");
            double base = Double.NaN;
            for (Result r : results) {
                if (r.what().startsWith("baseline")) {
                    base = r.opsPerSecond();
                }
                System.out.printf(
                        "%-26s %7d %12.0f %10.1f %10.1f %10.1f %11.2fx%n",
                        r.what(),
                        r.threads(),
                        r.opsPerSecond(),
                        r.percentileMicros(0.5),
                        r.percentileMicros(0.99),
                        r.percentileMicros(0.999),
                        r.opsPerSecond() / base);
            }
            System.out.println(
                    "\n'vs baseline' is throughput relative to the bare gRPC echo at the same thread count (1.00x = no directory overhead).");
        }
        return 0;
    }

    private static final int ROUNDS = 3;

    private static Result median(List<Result> rounds) {
        List<Result> sorted = new ArrayList<>(rounds);
        sorted.sort(java.util.Comparator.comparingDouble(Result::opsPerSecond));
        Result mid = sorted.get(sorted.size() / 2);
        long[] all = rounds.stream()
                .flatMapToLong(r -> Arrays.stream(r.latenciesNanos()))
                .sorted()
                .toArray();
        return new Result(mid.what(), mid.threads(), mid.ops(), mid.seconds(), all);
    }

    private static Result measure(String what, int threads, double seconds, IntFunction<Object> call)
            throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        long[][] lat = new long[threads][];
        int[] counts = new int[threads];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(threads);
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread.ofPlatform().daemon().start(() -> {
                long[] mine = new long[1 << 16];
                int n = 0;
                try {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    while (System.nanoTime() < deadline) {
                        long t0 = System.nanoTime();
                        call.apply(rnd.nextInt(Integer.MAX_VALUE));
                        if (n == mine.length) {
                            mine = Arrays.copyOf(mine, n * 2);
                        }
                        mine[n++] = System.nanoTime() - t0;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    lat[id] = mine;
                    counts[id] = n;
                    done.countDown();
                }
            });
        }
        done.await();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (failure.get() != null) {
            throw new IllegalStateException(what + " failed: " + failure.get(), failure.get());
        }
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int at = 0;
        for (int t = 0; t < threads; t++) {
            System.arraycopy(lat[t], 0, all, at, counts[t]);
            at += counts[t];
        }
        Arrays.sort(all);
        return new Result(what, threads, total, elapsed, all);
    }
}
