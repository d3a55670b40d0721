package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.IdleWait;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How a {@link ProgressThread} with nothing to do waits, and how other threads wake it: its {@link IdleStrategy} (spin,
 * yield, then park or sleep in the backend's kernel {@link IdleWait} where its lanes have one), the "parked" flag that
 * tells a submitter a wake is due, and the long kernel wait of a quiet thread. Only the progress thread calls
 * {@link #idle}, {@link #reset} and {@link #close}; any thread calls {@link #wakeIfParked} and {@link #wake}.
 */
final class ProgressIdle {
    /**
     * Longest kernel wait of a thread with nothing of its own in flight, over a wait that announces everything
     * ({@link IdleWait#announcesAll()}; {@code -Drdma4j.engine.quietWaitNanos}, default 20 ms). Anything that gives it
     * work ends the wait sooner; what it still does on waking (a departed peer's inbox retired after every thread has
     * polled once) may wait this long.
     */
    static final long QUIET_WAIT_NANOS = Long.getLong("rdma4j.engine.quietWaitNanos", 20_000_000);

    private final IdleStrategy strategy;
    /** The backend's kernel wait over the thread's lanes, or null: park between polls then. */
    private final IdleWait kernelWait;

    private final Thread thread;
    /** Whether work is waiting for the thread (checked once the flag is up, so that no submission sleeps). */
    private final BooleanSupplier hasWork;
    /** Whether the thread has nothing of its own queued, posted or to retry. */
    private final BooleanSupplier quiet;

    private volatile boolean parked;

    ProgressIdle(
            IdleStrategy strategy, IdleWait kernelWait, Thread thread, BooleanSupplier hasWork, BooleanSupplier quiet) {
        this.strategy = strategy;
        this.kernelWait = kernelWait;
        this.thread = thread;
        this.hasWork = hasWork;
        this.quiet = quiet;
    }

    /** {@return the backend's kernel wait over {@code lanes}, or null (recorded in {@code errors}) to park instead} */
    static IdleWait kernelWait(EngineBackend backend, LaneRuntime[] lanes, ProgressErrors errors) {
        int[] ids = new int[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            ids[i] = lanes[i].lane;
        }
        try {
            return backend.idleWait(ids);
        } catch (RuntimeException e) {
            errors.record(e); // park instead
            return null;
        }
    }

    /** Whether the thread sleeps in the backend's kernel wait when idle (else it parks). */
    boolean inKernel() {
        return kernelWait != null;
    }

    /** The thread did work: the next idle step starts the backoff over. */
    void reset() {
        strategy.reset();
    }

    /**
     * One idle step with nothing in flight. Once the backoff would park, the flag goes up first and the step is skipped
     * when work came in meanwhile, so a submitter that saw the flag down knows the thread will see its work.
     *
     * @param capNanos the longest park (a target whose peers' writes advance only while it polls); a kernel wait needs
     *     none
     */
    void idle(long capNanos) {
        if (strategy.parking()) {
            parked = true;
            if (!hasWork.getAsBoolean()) {
                step(capNanos);
            }
            parked = false;
        } else {
            step(capNanos);
        }
    }

    private void step(long capNanos) {
        // the quiet check only where the step would wait: spins and yields come first, many to a wait
        if (kernelWait != null && strategy.parking() && kernelWait.announcesAll() && quiet.getAsBoolean()) {
            strategy.idleQuiet(kernelWait, QUIET_WAIT_NANOS);
        } else {
            strategy.idle(capNanos, kernelWait);
        }
    }

    /** Work was handed to the thread: wakes it when it may be asleep. */
    void wakeIfParked() {
        if (parked) {
            wake();
        }
    }

    void wake() {
        if (kernelWait != null) {
            kernelWait.wake();
        } else {
            LockSupport.unpark(thread);
        }
    }

    /** Frees the kernel wait: the thread has stopped, or will never start. */
    void close() {
        if (kernelWait != null) {
            kernelWait.close();
        }
    }
}
