package io.rdma4j.engine.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What other threads hand one progress thread, linked through the items themselves ({@link LaneWork#next}): any thread
 * pushes, the progress thread takes everything at once and gets it back oldest first. Handing work over thus allocates
 * nothing, where a {@code ConcurrentLinkedQueue} allocates a node per item.
 */
final class Inbox {
    private static final VarHandle HEAD;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(Inbox.class, "head", LaneWork.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The newest item; each links to the one handed over before it. */
    private volatile LaneWork head;

    /** Hands {@code w} over (any thread); {@code w} must not be waiting in an inbox already. */
    void push(LaneWork w) {
        LaneWork h;
        do {
            h = head;
            w.next = h;
        } while (!HEAD.compareAndSet(this, h, w));
    }

    /**
     * Takes every item handed over so far (the progress thread only); {@return the oldest, linked to the next oldest
     * through {@link LaneWork#next}, or null when there was none}
     */
    LaneWork takeAll() {
        LaneWork w = (LaneWork) HEAD.getAndSet(this, null);
        LaneWork older = null;
        while (w != null) {
            LaneWork n = w.next;
            w.next = older;
            older = w;
            w = n;
        }
        return older;
    }

    boolean isEmpty() {
        return head == null;
    }
}
