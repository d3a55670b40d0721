package io.rdma4j.engine;

import java.time.Duration;

/**
 * The notifications peers sent to this engine, in arrival order. Each arrives once, after its data.
 *
 * <p>Arrival order need not be the order a peer wrote in. Its writes travel on all the lanes between the two engines,
 * and this engine reads its lanes in turn or on separate threads, so a later write's notification can arrive first,
 * even when the peer waited for the earlier write's future: that completes once the notification is sent, not once it
 * is read here. A protocol that needs order carries it in its tags (a sequence number, as the weights module tags each
 * piece with its plan's number) or waits for an answer.
 */
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
