package io.rdma4j.engine;

import java.time.Duration;

/** The notifications peers sent to this engine, in arrival order. Each arrives once, after its data. */
public interface Notifications {
    /** {@return the oldest notification not yet taken, or {@code null} when there is none} */
    Notification poll();

    /**
     * Waits up to {@code timeout} for a notification; returns {@code null} when none came.
     *
     * @param timeout how long to wait
     * @return the oldest notification not yet taken, or {@code null} when none came in time
     * @throws InterruptedException when the waiting thread is interrupted
     */
    Notification poll(Duration timeout) throws InterruptedException;

    /** {@return notifications received and not yet taken} */
    int size();
}
