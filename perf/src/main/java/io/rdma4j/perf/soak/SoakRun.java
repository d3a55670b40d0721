package io.rdma4j.perf.soak;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.spi.FaultInjectingBackend;
import io.rdma4j.rendezvous.Security;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One soak: a directory process, two peer processes ({@code steady}, never killed, and {@code victim}), each with an
 * shm and a tcp engine, and in this process an shm and a tcp engine with the fault injector, each sending
 * {@link Traffic} to both peers, plus {@link Checkpoints} to two scripted NVMe/TCP targets. After a warm-up (traffic,
 * then {@link Chaos} until every kind of fault came once, then fault-free settling) the resources of this process and
 * the steady peer are taken with the traffic paused; then the faults go on for the duration; then, after settling
 * again, the resources are taken once more.
 */
final class SoakRun {
    /** What a soak measured. */
    record Result(
            Duration ran,
            Ledger ledger,
            Chaos chaos,
            Checkpoints checkpoints,
            List<FaultInjectingBackend> backends,
            List<Measured> resources,
            List<String> errors,
            Path logs) {}

    /** A process's resources before the faults and after them. */
    record Measured(String process, Resources start, Resources end) {}

    /** Lease of every engine: short, so a killed peer's lease runs out, and the directory's restart is seen, soon. */
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final Duration duration;
    private final long seed;
    /** Where this process's engines publish their meters ({@code --metrics-port}), or null. */
    private final MeterRegistry meters;

    SoakRun(Duration duration, long seed, MeterRegistry meters) {
        this.duration = duration;
        this.seed = seed;
        this.meters = meters;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    Result run() throws Exception {
        long began = System.nanoTime();
        Path logs = Files.createTempDirectory("rdma4j-soak-");
        String id = "soak" + ProcessHandle.current().pid();
        Ledger ledger = new Ledger();
        List<String> errors = new ArrayList<>();
        ChildProcess directory = new ChildProcess("directory", logs, "128m", "directory", "" + freePort());
        String dir = null;
        List<ChildProcess> children = new ArrayList<>();
        List<TransferEngine> engines = new ArrayList<>();
        List<FaultInjectingBackend> backends = new ArrayList<>();
        List<Traffic> traffic = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        Checkpoints checkpoints = null;
        Chaos chaos = null;
        List<Measured> measured = new ArrayList<>();
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(
                r -> Thread.ofPlatform().daemon().name("soak-watchdog").unstarted(r));
        // closed last, after the engines: the traffic's buffers must outlive every transfer from them
        Arena arena = Arena.ofShared();
        try {
            children.add(directory);
            directory.start();
            dir = "127.0.0.1:" + directoryPort(directory);
            ChildProcess steady = new ChildProcess(
                    "steady", logs, "256m", "peer", id + "-steady", dir, "" + LEASE.toMillis(), "shm,tcp");
            // the victim speaks tcp only: libfabric 1.17's shm keeps a spin lock in each endpoint's shared region, and
            // a process killed while holding it leaves whoever posts to that region next spinning inside fi_read or
            // fi_write for good (seen once in CI: a progress thread spun for minutes), which no deadline can end
            ChildProcess victim =
                    new ChildProcess("victim", logs, "256m", "peer", id + "-victim", dir, "" + LEASE.toMillis(), "tcp");
            children.add(steady);
            children.add(victim);
            steady.start();
            victim.start();
            for (String provider : List.of("shm", "tcp")) {
                FaultInjectingBackend[] installed = new FaultInjectingBackend[1];
                TransferEngine.Builder b = TransferEngine.builder()
                        .name(id + "-" + provider)
                        .directory(dir, Security.none())
                        .backend("libfabric")
                        .provider(provider)
                        .lanesPerNic(2)
                        .chunkSize(256 << 10) // a 2 MiB write is eight chunks striped over both lanes
                        .lease(LEASE)
                        .backendWrapper(x -> installed[0] = new FaultInjectingBackend(x));
                if (meters != null) {
                    b.meterRegistry(meters);
                }
                TransferEngine e = (provider.equals("tcp") ? b.nicFilter("lo") : b).build();
                engines.add(e);
                backends.add(installed[0]);
                for (ChildProcess peer : provider.equals("shm") ? List.of(steady) : List.of(steady, victim)) {
                    String peerEngine = id + "-" + peer.label() + "-" + provider;
                    traffic.add(new Traffic(e, provider, peer, peerEngine, ledger, arena, seed + traffic.size()));
                }
            }
            TransferEngine.Builder nb = TransferEngine.builder()
                    .name(id + "-nvme")
                    .backend("libfabric")
                    .provider("tcp")
                    .nicFilter("lo");
            TransferEngine nvme = (meters == null ? nb : nb.meterRegistry(meters)).build();
            engines.add(nvme);
            checkpoints = new Checkpoints(nvme, ledger, logs);
            watchdog.scheduleWithFixedDelay(ledger::sweep, 200, 200, TimeUnit.MILLISECONDS);
            for (Traffic t : traffic) {
                threads.add(Thread.ofPlatform().name("soak-" + t.label()).start(t));
            }
            threads.add(Thread.ofPlatform().name("soak-checkpoints").start(checkpoints));

            // warm-up: traffic, then one round of every fault, so that what starts on first use (an engine's timer,
            // a pool's threads) is there before the resources are first taken
            Duration warmUp = clamp(duration.dividedBy(10), Duration.ofSeconds(5), Duration.ofSeconds(30));
            Thread.sleep(warmUp.toMillis());
            chaos = new Chaos(seed, backends, traffic, victim, directory, checkpoints);
            Thread chaosThread = Thread.ofPlatform().name("soak-chaos").start(chaos);
            Checkpoints c = checkpoints;
            Chaos ch = chaos;
            BooleanSupplier complete = () -> ch.everyKindInjected() && c.killed() > 0;
            long hardEnd =
                    System.nanoTime() + duration.plus(Duration.ofMinutes(5)).toNanos();
            while (System.nanoTime() < hardEnd && !complete.getAsBoolean()) {
                Thread.sleep(200);
            }
            settle(chaos);
            Resources[] start = quiet(traffic, checkpoints, ledger, steady, directory);
            chaos.hold(false);
            long chaosEnd = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() < chaosEnd) {
                Thread.sleep(200);
            }
            if (!complete.getAsBoolean()) {
                errors.add("not every kind of fault came within the duration and 5 minutes more");
            }
            chaos.stop();
            chaosThread.join();
            settle(chaos);
            Resources[] end = quiet(traffic, checkpoints, ledger, steady, directory);
            String[] names = {"soak (this process)", "steady peer", "directory"};
            for (int i = 0; i < names.length; i++) {
                measured.add(new Measured(names[i], start[i], end[i]));
            }
            // the directory restarted: its start is its last start, which the comparison does not cover
            measured.removeLast();
        } finally {
            traffic.forEach(Traffic::stop);
            if (checkpoints != null) {
                checkpoints.stop();
            }
            if (chaos != null) {
                chaos.stop();
            }
            for (Thread t : threads) {
                t.join(Ledger.GRACE.plus(Traffic.DEADLINE).plus(SoakPeer.AWAIT).toMillis());
            }
            // still open now: counted hung once past their deadline plus grace
            long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (ledger.openCount() > 0 && System.nanoTime() < until) {
                ledger.sweep();
                Thread.sleep(200);
            }
            watchdog.shutdownNow();
            for (TransferEngine e : engines.reversed()) {
                try {
                    e.close();
                } catch (RuntimeException x) {
                    errors.add("closing " + e.name() + ": " + x);
                }
            }
            if (checkpoints != null) {
                checkpoints.close();
            }
            for (ChildProcess c : children.reversed()) {
                c.close();
            }
            arena.close();
        }
        return new Result(
                Duration.ofNanos(System.nanoTime() - began),
                ledger,
                chaos,
                checkpoints,
                backends,
                measured,
                errors,
                logs);
    }

    /**
     * Holds the faults, then lets the traffic run fault-free for a while: the last restarts settle, lanes leave their
     * cooldown, and the victim is resolved again.
     */
    private void settle(Chaos chaos) throws InterruptedException {
        chaos.hold(true);
        while (!chaos.quiet() && !chaos.done()) {
            Thread.sleep(50);
        }
        Thread.sleep(clamp(duration.dividedBy(20), Duration.ofSeconds(5), Duration.ofSeconds(15))
                .toMillis());
    }

    private static int directoryPort(ChildProcess directory) {
        return Integer.parseInt(directory.args().getLast());
    }

    private static Duration clamp(Duration d, Duration min, Duration max) {
        return d.compareTo(min) < 0 ? min : d.compareTo(max) > 0 ? max : d;
    }

    /**
     * Pauses the traffic and the checkpoints, waits until every operation ended, and takes this process's, the steady
     * peer's and the directory's resources; then lets them go on.
     */
    private static Resources[] quiet(
            List<Traffic> traffic, Checkpoints checkpoints, Ledger ledger, ChildProcess steady, ChildProcess directory)
            throws Exception {
        traffic.forEach(t -> t.pause(true));
        checkpoints.pause(true);
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < until
                && (ledger.openCount() > 0
                        || !checkpoints.idle()
                        || !traffic.stream().allMatch(Traffic::idle))) {
            Thread.sleep(50);
        }
        Thread.sleep(1000); // completions and acknowledgements of the last operations drain
        Resources[] r = {Resources.self(), steady.stats(), directory.stats()};
        traffic.forEach(t -> t.pause(false));
        checkpoints.pause(false);
        return r;
    }
}
