package io.rdma4j.perf.soak;

import io.rdma4j.engine.ChecksumMismatchException;
import io.rdma4j.engine.LaneFailureException;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferTimeoutException;
import io.rdma4j.engine.UnknownBufferException;
import io.rdma4j.engine.UnknownPeerException;
import io.rdma4j.rendezvous.RendezvousException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every operation the soak starts, from start to end: completed ones with their latency, failed ones by a named cause,
 * and, through {@link #sweep}, the watchdog's count of those still running past their deadline plus {@link #GRACE}:
 * hung. Verified and corrupt bytes are counted here too.
 */
final class Ledger {
    /** What an operation is; storms are counted apart from the steady traffic. */
    enum Kind {
        WRITE,
        READ,
        BATCH,
        TAGGED,
        DEADLINE_STORM,
        CANCEL_STORM,
        CHECKPOINT,
        RESTORE;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * How long past its deadline an operation may still end without being counted hung: an engine's timer fires after
     * the deadline, and on a loaded two-core machine with four JVMs a thread can wait seconds for a core or a GC pause.
     */
    static final Duration GRACE = Duration.ofSeconds(5);

    private record Open(Kind kind, long startNanos, long deadlineNanos) {}

    private final Map<Long, Open> open = new ConcurrentHashMap<>();
    private final Map<Long, Boolean> hungIds = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong hung = new AtomicLong();
    private final AtomicLong verifiedBytes = new AtomicLong();
    private final AtomicLong corruptBytes = new AtomicLong();
    private final Map<String, AtomicLong> causes = new ConcurrentHashMap<>();
    private final Map<String, String> sampleMessages = new ConcurrentHashMap<>();
    private final Map<String, String> corruptions = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> lookups = new ConcurrentHashMap<>();
    private final Map<Kind, Latencies> latencies = new EnumMap<>(Kind.class);
    private final Map<Kind, AtomicLong> completedByKind = new EnumMap<>(Kind.class);

    Ledger() {
        for (Kind k : Kind.values()) {
            latencies.put(k, new Latencies());
            completedByKind.put(k, new AtomicLong());
        }
    }

    /** {@return the id of an operation starting now that must end within {@code deadline}} */
    long begin(Kind kind, Duration deadline) {
        long id = ids.incrementAndGet();
        long now = System.nanoTime();
        open.put(id, new Open(kind, now, now + deadline.toNanos()));
        return id;
    }

    /** Ends {@code id} when {@code t} ends: completed, or failed by the cause of its failure. */
    void follow(long id, Transfer t) {
        t.future().whenComplete((r, e) -> {
            if (e == null) {
                succeeded(id);
            } else {
                failed(id, e);
            }
        });
    }

    void succeeded(long id) {
        Open o = open.remove(id);
        if (o != null) {
            completed.incrementAndGet();
            completedByKind.get(o.kind).incrementAndGet();
            latencies.get(o.kind).add(System.nanoTime() - o.startNanos);
        }
    }

    void failed(long id, Throwable e) {
        Open o = open.remove(id);
        if (o != null) {
            failedToStart(e);
        }
    }

    /** Counts an operation that failed before or without a transfer, by its cause. */
    void failedToStart(Throwable e) {
        Throwable t = unwrap(e);
        String cause = cause(t);
        failed.incrementAndGet();
        causes.computeIfAbsent(cause, k -> new AtomicLong()).incrementAndGet();
        sampleMessages.putIfAbsent(cause, String.valueOf(t.getMessage()));
    }

    /** Counts a failed look-up of a peer's buffer in the directory (not a transfer), by its cause. */
    void lookupFailed(Throwable e) {
        String cause = cause(unwrap(e));
        lookups.computeIfAbsent(cause, k -> new AtomicLong()).incrementAndGet();
        sampleMessages.putIfAbsent("lookup: " + cause, String.valueOf(unwrap(e).getMessage()));
    }

    Map<String, Long> lookupFailures() {
        Map<String, Long> m = new TreeMap<>();
        lookups.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }

    void verified(long bytes) {
        verifiedBytes.addAndGet(bytes);
    }

    /** Counts {@code bytes} that differ from what was written, with a line on where (the first of each place). */
    void corrupt(long bytes, String where) {
        corruptBytes.addAndGet(bytes);
        corruptions.putIfAbsent(where, bytes + " bytes");
    }

    /** The watchdog: counts, once each, the operations still open past their deadline plus {@link #GRACE}. */
    void sweep() {
        long now = System.nanoTime();
        for (var e : open.entrySet()) {
            if (now - e.getValue().deadlineNanos > GRACE.toNanos() && hungIds.putIfAbsent(e.getKey(), true) == null) {
                hung.incrementAndGet();
                sampleMessages.putIfAbsent("hung " + e.getValue().kind.label(), "open past its deadline + grace");
            }
        }
    }

    int openCount() {
        return open.size();
    }

    long completed() {
        return completed.get();
    }

    long completed(Kind k) {
        return completedByKind.get(k).get();
    }

    long failed() {
        return failed.get();
    }

    long hung() {
        return hung.get();
    }

    long verifiedBytes() {
        return verifiedBytes.get();
    }

    long corruptBytes() {
        return corruptBytes.get();
    }

    Map<String, Long> causes() {
        Map<String, Long> m = new TreeMap<>();
        causes.forEach((k, v) -> m.put(k, v.get()));
        return m;
    }

    String sample(String cause) {
        return sampleMessages.get(cause);
    }

    Map<String, String> corruptions() {
        return new TreeMap<>(corruptions);
    }

    Latencies latencies(Kind k) {
        return latencies.get(k);
    }

    static Throwable unwrap(Throwable e) {
        Throwable t = e;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** A short, bounded name for why an operation failed. */
    static String cause(Throwable t) {
        return switch (t) {
            case CancellationException c -> "cancelled";
            case TransferTimeoutException x -> "deadline passed";
            case PeerLostException x -> "peer lost";
            case LaneFailureException x -> "lane failure on every lane tried";
            case ChecksumMismatchException x -> "checksum mismatch";
            case UnknownPeerException x -> "peer not announced";
            case UnknownBufferException x -> "buffer not published";
            case RendezvousException x -> "directory unreachable";
            case SoakFailure x -> x.cause;
            default -> t.getClass().getSimpleName();
        };
    }

    /** A failure the soak itself names (a missing notification, a peer process that exited). */
    static final class SoakFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String cause;

        SoakFailure(String cause, String message) {
            super(message);
            this.cause = cause;
        }
    }
}
