package io.rdma4j.weights.internal;

import io.rdma4j.engine.TransferEngine;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Watches a subscriber's publisher ranks for restarts on a thread of its own. A check is a directory lookup per rank,
 * and a manifest read for one that restarted: with both cores of a 2-core machine busy a check took up to 64 ms, and
 * made on the thread that handles the subscriber's notifications, it held up every piece landing meanwhile, twice a
 * second. What the watch finds waits in a queue until that thread takes it.
 */
public final class PublisherWatch implements AutoCloseable {
    /**
     * A publisher rank came back as a new process.
     *
     * @param rank its rank
     * @param generation its new process generation
     * @param epoch the epoch its manifest gives
     */
    public record Restart(int rank, long generation, int epoch) {}

    private final TransferEngine engine;
    /** Where manifests are read into: the watch's own, closed only once its thread has ended. */
    private final Arena arena = Arena.ofShared();

    private final String manifest;
    private final String[] names;
    private final long[] generations;
    private final long everyNanos;
    private final Queue<Restart> found = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    /**
     * Starts watching.
     *
     * @param engine the subscriber's engine
     * @param manifest the buffer name publishers publish their manifest under
     * @param names each rank's engine name, by rank (null: no such rank)
     * @param generations each rank's process generation when the subscriber joined it, by rank
     * @param every how often to check
     */
    public PublisherWatch(TransferEngine engine, String manifest, String[] names, long[] generations, Duration every) {
        this.engine = engine;
        this.manifest = manifest;
        this.names = names.clone();
        this.generations = generations.clone();
        this.everyNanos = every.toNanos();
        this.thread = Thread.ofPlatform()
                .daemon()
                .name("weights-publisher-watch-" + engine.name())
                .start(this::run);
    }

    private void run() {
        while (!closed) {
            try {
                Thread.sleep(Duration.ofNanos(everyNanos));
            } catch (InterruptedException e) {
                return;
            }
            check();
        }
    }

    private void check() {
        for (int r = 0; r < names.length && !closed; r++) {
            if (names[r] == null) {
                continue;
            }
            try {
                long g = engine.peer(names[r]).generation();
                if (g != generations[r]) {
                    Wire.Manifest m = ManifestReader.read(engine, arena, names[r], manifest, Duration.ofSeconds(2));
                    generations[r] = g;
                    found.add(new Restart(r, g, m.epoch()));
                }
            } catch (RuntimeException e) {
                // not back yet, or the engine is closing: the next check looks again
            }
        }
    }

    /** {@return the next restart found, or null; called by the thread that handles notifications} */
    public Restart poll() {
        return found.poll();
    }

    /**
     * Stops the watch and waits up to 3 s for its thread; idempotent. A thread still in a manifest read then (a read
     * may take up to its 10 s deadline) keeps the memory it reads into, rather than have the read land in freed memory.
     */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(Duration.ofSeconds(3));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!thread.isAlive() && arena.scope().isAlive()) {
            arena.close();
        }
    }
}
