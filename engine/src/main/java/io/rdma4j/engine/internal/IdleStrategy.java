package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.IdleWait;
import java.util.concurrent.locks.LockSupport;

/**
 * Backoff for a progress thread with nothing to do (Agrona's BackoffIdleStrategy): spin, then yield, then park (or
 * sleep in a backend's {@link IdleWait}) for a growing time up to a cap. {@link #reset()} on any work.
 */
public final class IdleStrategy {
    private final int spins;
    private final int yields;
    private final long minParkNanos;
    private final long maxParkNanos;
    private int state;
    private long parkNanos;

    public IdleStrategy(int spins, int yields, long minParkNanos, long maxParkNanos) {
        if (spins < 0 || yields < 0 || minParkNanos < 1 || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException("idle strategy needs spins, yields >= 0 and 1 <= minPark <= maxPark");
        }
        this.spins = spins;
        this.yields = yields;
        this.minParkNanos = minParkNanos;
        this.maxParkNanos = maxParkNanos;
        this.parkNanos = minParkNanos;
    }

    /** The default: spin 100, yield 100, park 1 us doubling to 1 ms. */
    public static IdleStrategy backoff() {
        return new IdleStrategy(100, 100, 1_000, 1_000_000);
    }

    /** Spins only (lowest latency, one core per progress thread). */
    public static IdleStrategy busySpin() {
        return new IdleStrategy(Integer.MAX_VALUE, 0, 1, 1);
    }

    /** @return whether the next {@link #idle()} may park (the submitter must then unpark) */
    public boolean parking() {
        return state >= spins + (long) yields;
    }

    /**
     * Like {@link #idle()}, but never parks longer than {@code capNanos} (a target whose peers may be streaming in).
     */
    public void idle(long capNanos) {
        if (state >= spins + (long) yields && parkNanos > capNanos) {
            parkNanos = Math.max(minParkNanos, capNanos);
        }
        idle();
    }

    public void idle() {
        idle(null);
    }

    /**
     * Like {@link #idle(long)}, sleeping in {@code wait} (when not null) instead of parking: the kernel ends the sleep
     * early when the lanes have work, so no cap is needed for peers streaming in.
     */
    public void idle(long capNanos, IdleWait wait) {
        if (wait == null) {
            idle(capNanos);
        } else {
            idle(wait);
        }
    }

    /**
     * Like {@link #idle(long, IdleWait)} with a kernel wait, its sleeps growing past the park cap up to
     * {@code longestNanos}: for a thread with nothing of its own in flight over a wait that announces everything that
     * could give it work ({@link IdleWait#announcesAll()}).
     */
    public void idleQuiet(IdleWait wait, long longestNanos) {
        idle(wait, Math.max(maxParkNanos, longestNanos));
    }

    private void idle(IdleWait wait) {
        idle(wait, maxParkNanos);
    }

    private void idle(IdleWait wait, long longestNanos) {
        if (state < spins) {
            state++;
            Thread.onSpinWait();
        } else if (state < spins + (long) yields) {
            state++;
            Thread.yield();
        } else {
            if (wait == null) {
                LockSupport.parkNanos(parkNanos);
            } else if (wait.await(Math.min(parkNanos, longestNanos))) {
                // a lane's descriptor fired: peers are sending (their writes give this side no completion, so the
                // polls that move them count no work). Poll through spins and yields again before the next sleep, as
                // after work, instead of a system call per poll while they stream
                reset();
                return;
            }
            parkNanos = Math.min(wait == null ? maxParkNanos : longestNanos, parkNanos << 1);
        }
    }

    public void reset() {
        state = 0;
        parkNanos = minParkNanos;
    }
}
