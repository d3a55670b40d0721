package io.rdma4j.perf.soak;

import io.rdma4j.engine.spi.FaultInjectingBackend;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Injects one fault at a time, at random intervals of 1 to 4 s, in a random order dealt from a shuffled deck of every
 * kind, so each kind comes once in every round of {@code Fault.values().length} faults.
 */
final class Chaos implements Runnable {
    /** The faults the soak injects. */
    enum Fault {
        LANE_FAILURE("lane failures (fault injector)"),
        PEER_KILL("peer kill -9 and restart"),
        DIRECTORY_RESTART("directory kill -9 and restart"),
        DEADLINE_STORM("deadline storms"),
        CANCEL_STORM("cancel storms"),
        NVME_TARGET_KILL("NVMe/TCP target killed mid-checkpoint");

        final String label;

        Fault(String label) {
            this.label = label;
        }
    }

    private final Random random;
    private final List<FaultInjectingBackend> backends;
    private final List<Traffic> traffic;
    private final ChildProcess victim;
    private final ChildProcess directory;
    private final Checkpoints checkpoints;
    private final List<Fault> deck = new ArrayList<>();
    private final Map<Fault, AtomicLong> injected = new EnumMap<>(Fault.class);
    private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    private volatile boolean running = true;
    private volatile boolean held;
    private volatile boolean injecting;
    private volatile boolean done;

    Chaos(
            long seed,
            List<FaultInjectingBackend> backends,
            List<Traffic> traffic,
            ChildProcess victim,
            ChildProcess directory,
            Checkpoints checkpoints) {
        this.random = new Random(seed);
        this.backends = backends;
        this.traffic = traffic;
        this.victim = victim;
        this.directory = directory;
        this.checkpoints = checkpoints;
        for (Fault f : Fault.values()) {
            injected.put(f, new AtomicLong());
        }
    }

    long injected(Fault f) {
        return injected.get(f).get();
    }

    /** {@return whether every kind of fault was injected at least once} */
    boolean everyKindInjected() {
        return injected.values().stream().allMatch(c -> c.get() > 0);
    }

    List<String> errors() {
        return List.copyOf(errors);
    }

    /** Stops after the fault in progress; {@link #done()} says when that one is over. */
    void stop() {
        running = false;
    }

    boolean done() {
        return done;
    }

    /** Holds back the next fault, or lets it come; {@link #quiet()} says when the one in progress is over. */
    void hold(boolean h) {
        held = h;
    }

    boolean quiet() {
        return held && !injecting;
    }

    @Override
    public void run() {
        try {
            while (running) {
                sleep(1000 + random.nextInt(3000));
                while (held && running) {
                    sleep(20);
                }
                if (!running) {
                    break;
                }
                injecting = true;
                if (held) { // held after the check above: wait again
                    injecting = false;
                    continue;
                }
                if (deck.isEmpty()) {
                    Collections.addAll(deck, Fault.values());
                    Collections.shuffle(deck, random);
                }
                Fault f = deck.removeLast();
                try {
                    if (inject(f)) {
                        injected.get(f).incrementAndGet();
                    } else {
                        deck.add(f); // not possible now (no peer resolved): dealt again later
                    }
                } catch (Exception e) {
                    errors.add(f.label + ": " + e);
                } finally {
                    injecting = false;
                }
            }
        } finally {
            done = true;
        }
    }

    private boolean inject(Fault f) throws Exception {
        switch (f) {
            case LANE_FAILURE -> {
                FaultInjectingBackend b = backends.get(random.nextInt(backends.size()));
                int lane = random.nextInt(b.lanes().size());
                int n = 1 + random.nextInt(8);
                if (random.nextBoolean()) {
                    b.failPosts(lane, n);
                } else {
                    b.failCompletions(lane, n);
                }
            }
            case PEER_KILL -> {
                victim.kill();
                victim.start();
            }
            case DIRECTORY_RESTART -> {
                directory.kill();
                directory.start();
            }
            case DEADLINE_STORM, CANCEL_STORM -> {
                Ledger.Kind kind = f == Fault.DEADLINE_STORM ? Ledger.Kind.DEADLINE_STORM : Ledger.Kind.CANCEL_STORM;
                return traffic.get(random.nextInt(traffic.size())).storm(kind);
            }
            case NVME_TARGET_KILL -> checkpoints.killNext();
        }
        return true;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
