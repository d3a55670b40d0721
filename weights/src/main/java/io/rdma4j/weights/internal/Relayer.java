package io.rdma4j.weights.internal;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Forwards the pieces a subscriber relays to the next subscribers of their chains. The writes are posted from a thread
 * of their own: a write to a dead peer may block until its lease expires, and must never stall the counting of what
 * lands. A failed forward is the publisher's to route around; here it is counted, and the last one said, whether the
 * write was refused at once or failed on its way.
 */
public final class Relayer {
    private final TransferEngine engine;
    private final LocalBuffer[] slots;
    private final String slotName;
    private final ExecutorService thread =
            Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().unstarted(r));
    private final Duration deadline;
    private final AtomicLong failures = new AtomicLong();
    private volatile String lastFailure;

    /**
     * @param engine the subscriber's engine
     * @param slots the subscriber's version buffers, which the pieces landed in
     * @param slotName the name every subscriber publishes its buffer {@code s} under, followed by {@code s}
     */
    public Relayer(TransferEngine engine, LocalBuffer[] slots, String slotName) {
        this(engine, slots, slotName, Duration.ofSeconds(30));
    }

    /** As {@link #Relayer(TransferEngine, LocalBuffer[], String)}, each forward given {@code deadline} to land. */
    Relayer(TransferEngine engine, LocalBuffer[] slots, String slotName, Duration deadline) {
        this.engine = engine;
        this.slots = slots;
        this.slotName = slotName;
        this.deadline = deadline;
    }

    /** {@return forwards that failed: refused at once, or failed or timed out on their way} */
    public long failures() {
        return failures.get();
    }

    /** {@return what the last failed forward said, naming its target and version, or null if none failed} */
    public String lastFailure() {
        return lastFailure;
    }

    /**
     * Forwards piece {@code in}, landed in buffer {@code slot} for {@code version}, to each of its next subscribers.
     *
     * @param targets the next subscribers' buffers looked up so far, by engine name (kept per publisher rank)
     * @param tag the piece's tag as it arrived; each forward carries its own piece number in the low 16 bits
     */
    public void forward(
            Map<String, RemoteBuffer[]> targets, Wire.InPiece in, int slot, long version, boolean crc, long tag) {
        if (!in.forwards().isEmpty()) {
            thread.execute(() -> forwardNow(targets, in, slot, version, crc, tag));
        }
    }

    private void forwardNow(
            Map<String, RemoteBuffer[]> targets, Wire.InPiece in, int slot, long version, boolean crc, long tag) {
        for (Wire.OutForward f : in.forwards()) {
            try {
                RemoteBuffer[] t = targets.get(f.target());
                if (t == null) {
                    t = new RemoteBuffer[f.slots()];
                    for (int s = 0; s < t.length; s++) {
                        t[s] = engine.peer(f.target()).buffer(slotName + s);
                    }
                    targets.put(f.target(), t);
                }
                Runs.Group g = new Runs.Group(
                        in.dst(), in.dst() + f.delta(), in.length(), in.count(), in.stride(), in.stride());
                long ftag = (tag & ~0xffffL) | f.piece();
                TransferOptions o = TransferOptions.tag(ftag).withDeadline(deadline);
                Sender.send(engine, slots[slot], t[(int) (version % t.length)], g, crc ? o.withCrc32c() : o)
                        .whenComplete((x, e) -> {
                            if (e != null) {
                                failed(targets, f, version, e);
                            }
                        });
            } catch (RuntimeException e) {
                failed(targets, f, version, e);
            }
        }
    }

    /** Counts a failed forward, and forgets the target's buffers: the next version looks them up again. */
    private void failed(Map<String, RemoteBuffer[]> targets, Wire.OutForward f, long version, Throwable e) {
        targets.remove(f.target());
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        lastFailure =
                "forward of version " + version + " piece " + f.piece() + " to " + f.target() + " failed: " + cause;
        failures.incrementAndGet();
    }

    /** Stops: forwards not yet begun are dropped, and the one under way gets up to {@code max} to finish. */
    public void stop(Duration max) throws InterruptedException {
        thread.shutdownNow();
        thread.awaitTermination(max.toNanos(), TimeUnit.NANOSECONDS);
    }
}
