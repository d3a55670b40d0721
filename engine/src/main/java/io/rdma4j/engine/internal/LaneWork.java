package io.rdma4j.engine.internal;

/**
 * Work handed to a progress thread: a {@link Stripe}, a {@link NotifyCopy} or a task. It links itself into the thread's
 * {@link Inbox}, so that handing it over allocates no queue node. An item is in one inbox at a time: it is handed over
 * again (a notification copy retried) only after its thread took it.
 */
abstract class LaneWork {
    /** The item handed over before this one, while both wait in an inbox; null once taken. */
    LaneWork next;
}
