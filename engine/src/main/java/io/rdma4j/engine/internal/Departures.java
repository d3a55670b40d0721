package io.rdma4j.engine.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Initiators that left, held until what they wrote last has been read. A peer that exits as soon as its last write
 * completes leaves the directory before this engine may have polled that write's completion (on tcp the bytes may still
 * sit in a socket), and retiring its inbox and connections at once would discard the write. Each departure waits a
 * grace for bytes still in flight, then until every progress thread has polled all its lanes in a round begun after the
 * grace.
 *
 * @param <T> what is retired once its writes are read
 */
final class Departures<T> {
    /** The wait for bytes still in flight after the peer left, before the last polls that let its inbox go. */
    static final long GRACE_NANOS = 100_000_000L;

    private record Leaving<T>(T what, long due) {}

    private final List<Leaving<T>> leaving = new CopyOnWriteArrayList<>();
    private final long[] lastRound;

    /** @param threads the progress threads that poll the lanes */
    Departures(int threads) {
        this.lastRound = new long[threads];
        Arrays.fill(lastRound, Long.MIN_VALUE);
    }

    /** {@code what} left at {@code now} (nanoTime). */
    void add(T what, long now) {
        leaving.add(new Leaving<>(what, now + GRACE_NANOS));
    }

    /** {@return whether some departure is still waiting (a cheap read for each progress round)} */
    boolean any() {
        return !leaving.isEmpty();
    }

    /**
     * Progress thread {@code thread} polled every lane it drives, in a round begun at {@code roundStart} (nanoTime).
     *
     * @return the departures every thread has now polled past: retire them
     */
    synchronized List<T> polled(int thread, long roundStart) {
        lastRound[thread] = roundStart;
        long all = Long.MAX_VALUE;
        for (long t : lastRound) {
            all = Math.min(all, t);
        }
        List<T> due = new ArrayList<>();
        for (Leaving<T> l : leaving) {
            if (all != Long.MIN_VALUE && l.due() - all <= 0) {
                due.add(l.what());
                leaving.remove(l);
            }
        }
        return due;
    }

    /** {@return every departure still waiting, now taken out (the engine closes)} */
    synchronized List<T> takeAll() {
        List<T> all = new ArrayList<>();
        for (Leaving<T> l : leaving) {
            all.add(l.what());
        }
        leaving.clear();
        return all;
    }
}
