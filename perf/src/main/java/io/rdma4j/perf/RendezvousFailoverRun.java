package io.rdma4j.perf;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import io.rdma4j.rendezvous.Security;
import io.rdma4j.rendezvous.etcd.LocalEtcdCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ./rdma4j bench rendezvous-failover [--peers 1000] [--publications 10] [--etcd-members 3] [--directories 3]
 * [--per-client 20] [--lease-s 15] [--provider shm]}: the full-size failover run of issue 17. Starts an etcd cluster on
 * loopback and directory processes (separate JVMs) on it, announces simulated engines with their publications through
 * many clients, and keeps three real transfer engines writing to each other and verifying the bytes. Mid-run it kills
 * one directory process and one etcd member with SIGKILL, then checks that nothing announced or published was lost and
 * that resolves kept answering; last it kills an engine process and times its lease running out, and restarts it under
 * a new generation.
 */
final class RendezvousFailoverRun implements BenchRun {
    private static final Duration PHASE = Duration.ofSeconds(4);
    /**
     * The phase from the kills on: etcd elects a new leader and the clients move off the dead directory within it, so
     * it shows the slow calls and the writes that continue after them.
     */
    private static final Duration DURING = Duration.ofSeconds(8);

    private static final long ENGINE_BYTES = 1 << 20;

    @Override
    public String name() {
        return "rendezvous-failover";
    }

    @Override
    public String summary() {
        return "1,000 peers on etcd-backed directories: kill -9 a directory, an etcd member and an engine";
    }

    @Override
    public int run(String[] args) throws Exception {
        int peers = 1000;
        int publications = 10;
        int members = 3;
        int directories = 3;
        int perClient = 20;
        int leaseSeconds = 15;
        String provider = "shm";
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--peers" -> peers = Integer.parseInt(v);
                case "--publications" -> publications = Integer.parseInt(v);
                case "--etcd-members" -> members = Integer.parseInt(v);
                case "--directories" -> directories = Integer.parseInt(v);
                case "--per-client" -> perClient = Integer.parseInt(v);
                case "--lease-s" -> leaseSeconds = Integer.parseInt(v);
                case "--provider" -> provider = v;
                default ->
                    throw new IllegalArgumentException("unknown option " + args[i] + "; options: --peers N"
                            + " --publications N --etcd-members N --directories N --per-client N --lease-s S"
                            + " --provider shm|tcp");
            }
        }
        if (args.length % 2 != 0) {
            throw new IllegalArgumentException(args[args.length - 1] + " needs a value");
        }
        if (members < 3 || directories < 2) {
            throw new IllegalArgumentException(
                    "a member and a directory are killed: give --etcd-members >= 3 and" + " --directories >= 2");
        }
        String missing = LocalEtcdCluster.unavailabilityCause();
        if (missing != null) {
            System.err.println("rendezvous-failover: " + missing);
            return 2;
        }
        Path tmp = Files.createTempDirectory("rdma4j-failover-");
        Duration lease = Duration.ofSeconds(leaseSeconds);
        List<AutoCloseable> open = new ArrayList<>();
        try {
            LocalEtcdCluster etcd = LocalEtcdCluster.start(tmp.resolve("etcd"), members);
            open.add(etcd);
            List<Child> dirs = new ArrayList<>();
            for (int i = 0; i < directories; i++) {
                Child d = Child.start(tmp, "directory-" + i, "directory", etcd.url());
                open.add(d);
                dirs.add(d);
            }
            String all = String.join(
                    ",",
                    dirs.stream()
                            .map(d -> d.line.substring("directory ".length()))
                            .toList());
            System.out.printf(
                    "rendezvous-failover: %d etcd members, %d directory processes (%s)%n", members, directories, all);

            // simulated engines: perClient announcements per client, each client one heartbeat thread
            int clientsNeeded = (peers + perClient - 1) / perClient;
            List<Rendezvous> clients = new ArrayList<>();
            for (int i = 0; i < clientsNeeded; i++) {
                Rendezvous r = Rendezvous.connect(all, Security.none(), Duration.ofSeconds(10));
                open.add(r);
                clients.add(r);
            }
            System.out.printf(
                    "rendezvous-failover: announcing %d simulated engines x %d publications through %d clients"
                            + " (%d announcements per client and heartbeat thread), simulated leases %d s%n",
                    peers, publications, clientsNeeded, perClient, leaseSeconds);
            long t0 = System.nanoTime();
            List<Announcement> announced = announceAll(clients, peers, publications, lease);
            System.out.printf(
                    "rendezvous-failover: announced and published in %.1f s%n", (System.nanoTime() - t0) / 1e9);

            // three real engines writing around a ring, verifying every byte at the target
            EngineRing ring = new EngineRing(all, provider);
            open.add(ring);
            Rendezvous reader = Rendezvous.connect(all, Security.none(), Duration.ofSeconds(10));
            open.add(reader);
            Resolver resolver = new Resolver(reader, peers);
            Thread resolving = Thread.ofPlatform().name("failover-resolves").start(resolver);
            Thread writing = Thread.ofPlatform().name("failover-writes").start(ring);

            Thread.sleep(PHASE.toMillis());
            Phase before = resolver.cut("before");
            EngineRing.Counts writesBefore = ring.cut();
            // every client starts on the first directory: lose that one, and an etcd member
            dirs.get(0).kill();
            etcd.kill(0);
            System.out.printf(
                    "rendezvous-failover: killed -9 directory process %s and etcd member m0%n",
                    dirs.get(0).line.substring("directory ".length()));
            Thread.sleep(DURING.toMillis());
            Phase during = resolver.cut("during");
            EngineRing.Counts writesDuring = ring.cut();
            // a lease longer: a heartbeat lost to the kills would have let one expire by now
            Thread.sleep(lease.toMillis() + 2000);
            resolver.cut("settling");
            ring.cut();
            Thread.sleep(PHASE.toMillis());
            Phase after = resolver.cut("after");
            EngineRing.Counts writesAfter = ring.cut();
            resolver.stop = true;
            ring.stop = true;
            resolving.join();
            writing.join();

            int[] lost = lost(reader, peers, publications);
            int reannounced =
                    announced.stream().mapToInt(Announcement::reannouncements).sum();
            long heartbeatErrors =
                    announced.stream().filter(a -> a.lastError() != null).count();

            // an engine process killed: nothing renews its lease, etcd expires it; its restart is a new generation
            int victimLeaseMs = 3000;
            Child victim =
                    Child.start(tmp, "victim", "engine", "victim", all, provider, Integer.toString(victimLeaseMs));
            open.add(victim);
            long gen1 = ring.engines[0].peer("victim").generation();
            long killedAt = System.nanoTime();
            victim.kill();
            double expiredAfter = Double.NaN;
            while (System.nanoTime() - killedAt < 30_000_000_000L) {
                if (reader.resolve("victim").isEmpty()) {
                    expiredAfter = (System.nanoTime() - killedAt) / 1e9;
                    break;
                }
                Thread.sleep(20);
            }
            Child restarted =
                    Child.start(tmp, "victim-2", "engine", "victim", all, provider, Integer.toString(victimLeaseMs));
            open.add(restarted);
            long gen2 = reader.resolve("victim").orElseThrow().generation();
            LocalBuffer src = ring.sources[0];
            ring.engines[0].write(src, ring.engines[0].peer("victim"), "sink").join();

            System.out.printf(
                    "%nrendezvous-failover: %d peers x %d publications, %d etcd members, %d directories;"
                            + " kills: 1 directory process, 1 etcd member, 1 engine process (all SIGKILL)%n",
                    peers, publications, members, directories);
            System.out.printf(
                    "  lost: %d peers, %d publications; %d re-announcements, %d announcements with a heartbeat error%n",
                    lost[0], lost[1], reannounced, heartbeatErrors);
            System.out.printf(
                    "  %-8s %10s %10s %10s %8s %14s%n",
                    "resolves", "count", "p50 ms", "p99 ms", "failed", "engine writes");
            for (Object[] row : new Object[][] {{before, writesBefore}, {during, writesDuring}, {after, writesAfter}}) {
                Phase p = (Phase) row[0];
                EngineRing.Counts w = (EngineRing.Counts) row[1];
                System.out.printf(
                        "  %-8s %10d %10.2f %10.2f %8d %7d ok, %d bad%n",
                        p.name,
                        p.count(),
                        p.percentileMillis(0.5),
                        p.percentileMillis(0.99),
                        p.failed,
                        w.verified,
                        w.failed);
            }
            System.out.printf(
                    "  phases: before = %d s up to the kills, during = %d s from the kills, after = %d s from one"
                            + " simulated lease + %d s after them; engine writes resolve the target peer each time%n",
                    PHASE.toSeconds(), DURING.toSeconds(), PHASE.toSeconds(), DURING.toSeconds() + 2);
            System.out.printf(
                    "  engine 'victim' (lease %d ms) killed -9: gone from the directory after %.2f s;"
                            + " restarted at generation %d (was %d, %s); a write to it completed%n",
                    victimLeaseMs, expiredAfter, gen2, gen1, gen2 > gen1 ? "newer" : "NOT NEWER");
            boolean ok = lost[0] == 0
                    && lost[1] == 0
                    && after.failed == 0
                    && writesAfter.failed == 0
                    && writesDuring.failed == 0
                    && writesAfter.verified > 0
                    && expiredAfter <= victimLeaseMs / 1000.0 + 1
                    && gen2 > gen1;
            System.out.println("rendezvous-failover: " + (ok ? "PASS" : "FAIL"));
            return ok ? 0 : 1;
        } finally {
            io.rdma4j.Closeables.closeAll(open.reversed());
        }
    }

    private static PeerInfo peer(int i) {
        return RendezvousFixture.peer(i);
    }

    private static BufferInfo buffer(int peer, int b) {
        List<LaneKey> keys = List.of(new LaneKey(0, 0x7f00_0000_0000L + b * (1L << 20), 0x10000 + peer));
        return BufferInfo.of(bufferName(peer, b), 1 << 20, MemoryKind.HOST, Locality.host(0), 1, keys);
    }

    private static String bufferName(int peer, int b) {
        return RendezvousFixture.peerName(peer) + "/b" + b;
    }

    private static List<Announcement> announceAll(List<Rendezvous> clients, int peers, int publications, Duration lease)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Announcement>> fs = new ArrayList<>();
            for (int p = 0; p < peers; p++) {
                int id = p;
                fs.add(pool.submit(() -> {
                    Announcement a = clients.get(id % clients.size()).announce(peer(id), lease);
                    for (int b = 0; b < publications; b++) {
                        a.publish(buffer(id, b));
                    }
                    return a;
                }));
            }
            List<Announcement> out = new ArrayList<>();
            for (Future<Announcement> f : fs) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** @return peers and publications the directory no longer answers */
    private static int[] lost(Rendezvous reader, int peers, int publications) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicInteger lostPeers = new AtomicInteger();
        AtomicInteger lostBuffers = new AtomicInteger();
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int p = 0; p < peers; p++) {
                int id = p;
                fs.add(pool.submit(() -> {
                    if (reader.resolve(RendezvousFixture.peerName(id)).isEmpty()) {
                        lostPeers.incrementAndGet();
                    }
                    for (int b = 0; b < publications; b++) {
                        if (reader.lookup(bufferName(id, b)).isEmpty()) {
                            lostBuffers.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return new int[] {lostPeers.get(), lostBuffers.get()};
    }

    /** Resolve latencies of one phase; failed resolves (an error or no answer) count apart. */
    record Phase(String name, long[] nanos, long failed) {
        int count() {
            return nanos.length;
        }

        double percentileMillis(double p) {
            return nanos.length == 0 ? Double.NaN : nanos[Math.min(nanos.length - 1, (int) (p * nanos.length))] / 1e6;
        }
    }

    /** Resolves random simulated engines back to back until stopped; {@link #cut} ends a phase. */
    private static final class Resolver implements Runnable {
        private final Rendezvous reader;
        private final int peers;
        private long[] nanos = new long[1 << 14];
        private int n;
        private long failed;
        volatile boolean stop;

        Resolver(Rendezvous reader, int peers) {
            this.reader = reader;
            this.peers = peers;
        }

        @Override
        public void run() {
            while (!stop) {
                long t = System.nanoTime();
                boolean ok;
                try {
                    ok = reader.resolve(RendezvousFixture.peerName(
                                    ThreadLocalRandom.current().nextInt(peers)))
                            .isPresent();
                } catch (RendezvousException e) {
                    ok = false;
                }
                long d = System.nanoTime() - t;
                synchronized (this) {
                    if (ok) {
                        if (n == nanos.length) {
                            nanos = Arrays.copyOf(nanos, n * 2);
                        }
                        nanos[n++] = d;
                    } else {
                        failed++;
                    }
                }
            }
        }

        synchronized Phase cut(String name) {
            long[] s = Arrays.copyOf(nanos, n);
            Arrays.sort(s);
            Phase p = new Phase(name, s, failed);
            n = 0;
            failed = 0;
            return p;
        }
    }

    /** Three engines in this process writing 1 MiB around a ring; the target checks every byte of each write. */
    private static final class EngineRing implements Runnable, AutoCloseable {
        record Counts(long verified, long failed) {}

        final Arena arena = Arena.ofShared();
        final TransferEngine[] engines = new TransferEngine[3];
        final LocalBuffer[] sources = new LocalBuffer[3];
        final MemorySegment[] sinks = new MemorySegment[3];
        final AtomicLong verified = new AtomicLong();
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> firstFailure = new AtomicReference<>();
        volatile boolean stop;

        EngineRing(String directories, String provider) {
            long pid = ProcessHandle.current().pid();
            for (int i = 0; i < engines.length; i++) {
                TransferEngine.Builder b = TransferEngine.builder()
                        .name("engine-" + i + "-" + pid)
                        .directory(directories, Security.none())
                        .backend("libfabric")
                        .provider(provider)
                        .lanesPerNic(1);
                engines[i] = (provider.startsWith("tcp") ? b.nicFilter("lo") : b).build();
                sinks[i] = arena.allocate(ENGINE_BYTES, 4096);
                engines[i].publish("sink", engines[i].register(sinks[i]), Access.anyPeer());
                sources[i] = engines[i].register(arena.allocate(ENGINE_BYTES, 4096));
            }
        }

        @Override
        public void run() {
            long round = 0;
            while (!stop) {
                round++;
                for (int i = 0; i < engines.length; i++) {
                    int to = (i + 1) % engines.length;
                    long seed = round * 31 + i;
                    MemorySegment src = sources[i].segment();
                    for (long off = 0; off < ENGINE_BYTES; off += 8) {
                        src.set(ValueLayout.JAVA_LONG_UNALIGNED, off, seed * 0x9E3779B97F4A7C15L + off);
                    }
                    try {
                        long tag = round * 8 + i;
                        engines[i]
                                .write(
                                        sources[i],
                                        engines[i].peer(engines[to].name()),
                                        "sink",
                                        TransferOptions.tag(tag))
                                .join();
                        if (engines[to].awaitTag(tag, Duration.ofSeconds(10)) == null) {
                            fail("no notification for write " + tag);
                            continue;
                        }
                        long bad = -1;
                        for (long off = 0; off < ENGINE_BYTES && bad < 0; off += 8) {
                            if (sinks[to].get(ValueLayout.JAVA_LONG_UNALIGNED, off)
                                    != seed * 0x9E3779B97F4A7C15L + off) {
                                bad = off;
                            }
                        }
                        if (bad >= 0) {
                            fail("write " + tag + " to " + engines[to].name() + " differs at byte " + bad);
                        } else {
                            verified.incrementAndGet();
                        }
                    } catch (RuntimeException e) {
                        fail(e.toString());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }
        }

        private void fail(String why) {
            failed.incrementAndGet();
            if (firstFailure.compareAndSet(null, why)) {
                System.out.println("rendezvous-failover: engine write failed: " + why);
            }
        }

        Counts cut() {
            return new Counts(verified.getAndSet(0), failed.getAndSet(0));
        }

        @Override
        public void close() {
            List<AutoCloseable> steps = new ArrayList<>(Arrays.asList(engines));
            steps.add(arena::close);
            io.rdma4j.Closeables.closeAll(steps);
        }
    }

    /** A {@link FailoverChild} JVM; its first line of output says it is ready. */
    private static final class Child implements AutoCloseable {
        final Process process;
        final String line;

        private Child(Process process, String line) {
            this.process = process;
            this.line = line;
        }

        static Child start(Path dir, String name, String... args) throws IOException {
            List<String> cmd = ChildJava.command(List.of("-XX:+UseSerialGC"), FailoverChild.class, List.of(args));
            Process p = new ProcessBuilder(cmd)
                    .redirectError(ProcessBuilder.Redirect.appendTo(
                            dir.resolve(name + ".log").toFile()))
                    .start();
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = r.readLine();
            if (first == null) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        name + " exited before it was ready; see " + dir.resolve(name + ".log"));
            }
            return new Child(p, first);
        }

        void kill() throws InterruptedException {
            process.destroyForcibly().waitFor();
        }

        @Override
        public void close() throws InterruptedException {
            kill();
        }
    }
}
