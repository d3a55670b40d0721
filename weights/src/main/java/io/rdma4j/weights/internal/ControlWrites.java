package io.rdma4j.weights.internal;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A subscriber's control writes to its publisher ranks (joins, confirmations, frees): 8-byte writes whose tag is the
 * message. Each rank's control buffer is looked up once, not per write (again only once the engine lost that link): a
 * lookup is two directory calls, slow on a loaded machine, and cancelled by an interrupt from a closing subscriber,
 * which lost the confirmation it was about to send. The writes still on their way are kept, so that a closing
 * subscriber lets them arrive.
 */
public final class ControlWrites {
    private final TransferEngine engine;
    private final LocalBuffer source;
    private final String bufferName;
    private final Map<String, RemoteBuffer> buffers = new ConcurrentHashMap<>();
    private final Set<CompletableFuture<?>> inFlight = ConcurrentHashMap.newKeySet();

    /** How long a control write may take before it fails; {@link #awaitSent} waits as long. */
    public static final Duration DEADLINE = Duration.ofSeconds(5);

    private final AtomicLong failures = new AtomicLong();
    private volatile String lastFailure;

    /**
     * @param engine the subscriber's engine
     * @param source 8 registered bytes to write from (their content is not read: the tag carries the message)
     * @param bufferName the control buffer every publisher rank publishes
     */
    public ControlWrites(TransferEngine engine, LocalBuffer source, String bufferName) {
        this.engine = engine;
        this.source = source;
        this.bufferName = bufferName;
    }

    /**
     * Writes {@code tag} to {@code publisher}'s control buffer. A failure is dropped: the publisher is gone or
     * restarting, and the subscriber's rejoin check finds its successor. A control buffer looked up before the engine
     * lost its link to the publisher (this subscriber's own lease lapsed, as after a stall, and each side dropped its
     * connections) refuses the write before it goes: it is looked up afresh and the write sent over the new link.
     */
    public void send(String publisher, long tag) {
        RemoteBuffer cached = buffers.get(publisher);
        if (cached != null) {
            try {
                write(publisher, cached, tag);
                return;
            } catch (PeerLostException e) {
                buffers.remove(publisher, cached); // nothing went: the link it named is gone
            } catch (RuntimeException e) {
                failed(publisher, tag, e);
                buffers.remove(publisher, cached);
                return;
            }
        }
        try {
            RemoteBuffer c = engine.peer(publisher).buffer(bufferName);
            buffers.put(publisher, c);
            write(publisher, c, tag);
        } catch (RuntimeException e) {
            failed(publisher, tag, e);
            buffers.remove(publisher);
        }
    }

    /** Starts the write; throws when the engine refuses it before it goes. */
    private void write(String publisher, RemoteBuffer to, long tag) {
        CompletableFuture<?> f = engine.write(
                        source, 0, to, 0, 8, TransferOptions.tag(tag).withDeadline(DEADLINE))
                .future();
        inFlight.add(f);
        f.whenComplete((x, e) -> {
            inFlight.remove(f);
            if (e != null) {
                failed(publisher, tag, e);
                buffers.remove(publisher, to); // it may have restarted: look it up afresh next time
            }
        });
    }

    private void failed(String publisher, long tag, Throwable e) {
        failures.incrementAndGet();
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        lastFailure = "to " + publisher + " (tag 0x" + Long.toHexString(tag) + "): " + cause;
    }

    /** {@return the control writes that failed or could not be sent, dropped as {@link #send} says} */
    public long failures() {
        return failures.get();
    }

    /** {@return the last of {@link #failures()}: to whom, which message, and why; null when none failed} */
    public String lastFailure() {
        return lastFailure;
    }

    /** {@code publisher} restarted: its control buffer is looked up again at the next write. */
    public void forget(String publisher) {
        buffers.remove(publisher);
    }

    /**
     * Waits for the writes still on their way, each until it lands or its deadline passes: closing the engine under
     * them would cancel them, and the publisher would count a subscriber that has its version as failed. A shorter wait
     * cancelled confirmations that a loaded machine was still delivering.
     */
    public void awaitSent() throws InterruptedException {
        long end = System.nanoTime() + DEADLINE.toNanos();
        for (CompletableFuture<?> f : List.copyOf(inFlight)) {
            try {
                f.get(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException | CancellationException e) {
                // the publisher is gone or slow: it learns of this subscriber from its lease instead
            }
        }
    }
}
