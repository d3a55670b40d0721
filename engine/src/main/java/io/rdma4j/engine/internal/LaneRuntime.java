package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One lane's data-path state, touched only by the progress thread that owns it (except the volatile health fields).
 * In-flight operations live in slot tables of primitives indexed by the completion context, so posting and completing a
 * chunk allocates nothing.
 */
final class LaneRuntime {
    final int lane;
    final LaneDescriptor descriptor;
    final int depth;
    final Object[] slotOwner;
    final byte[] slotKind;
    final long[] slotOffset;
    final long[] slotLength;
    final int[] slotAttempt;
    final int[] slotRemoteLane;
    final int[] slotConnection;
    final int[] free;
    int freeTop;
    final ArrayDeque<Stripe> pending = new ArrayDeque<>();
    final ArrayDeque<NotifyCopy> notifyPending = new ArrayDeque<>();
    final ArrayDeque<OutChannel> creditRetry = new ArrayDeque<>();
    /** Failures since the last success; drives the growing cool-down. */
    int failures;

    volatile long pausedUntilNanos;
    volatile boolean failed;
    volatile String lastError;
    final AtomicLong bytesCompleted = new AtomicLong();
    final AtomicLong chunksCompleted = new AtomicLong();
    final AtomicLong chunkErrors = new AtomicLong();
    ProgressThread owner;
    /** The most pieces one vectored write on this lane takes (the backend's limit, at most 16); 1: none. */
    int vectorLimit = 1;
    /** The most bytes one vectored write on this lane carries (the backend's bound). */
    long vectorBytes = Long.MAX_VALUE;

    LaneRuntime(LaneDescriptor descriptor, int depth) {
        this.lane = descriptor.index();
        this.descriptor = descriptor;
        this.depth = depth;
        slotOwner = new Object[depth];
        slotKind = new byte[depth];
        slotOffset = new long[depth];
        slotLength = new long[depth];
        slotAttempt = new int[depth];
        slotRemoteLane = new int[depth];
        slotConnection = new int[depth];
        free = new int[depth];
        for (int i = 0; i < depth; i++) {
            free[i] = depth - 1 - i;
        }
        freeTop = depth;
    }

    int inflight() {
        return depth - freeTop;
    }

    boolean paused(long now) {
        return failed || now - pausedUntilNanos < 0;
    }

    int takeSlot() {
        return freeTop == 0 ? -1 : free[--freeTop];
    }

    void giveSlot(int slot) {
        slotOwner[slot] = null;
        free[freeTop++] = slot;
    }

    /** Records a failure and pauses the lane for a cool-down that doubles with each consecutive failure. */
    void fail(String error, long baseCooldownNanos, long maxCooldownNanos, EngineBackend backend) {
        lastError = error;
        chunkErrors.incrementAndGet();
        failures = Math.min(failures + 1, 30);
        long cd = Math.min(maxCooldownNanos, baseCooldownNanos << Math.min(failures - 1, 20));
        pausedUntilNanos = System.nanoTime() + cd;
        LaneFailureEvent.emit(lane, descriptor.device(), error, cd, failures);
    }

    String describe() {
        return "lane " + lane + " (" + descriptor.device()
                + (descriptor.pciAddress() == null ? "" : " " + descriptor.pciAddress()) + ")";
    }
}
