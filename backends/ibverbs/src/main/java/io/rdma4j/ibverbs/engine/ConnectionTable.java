package io.rdma4j.ibverbs.engine;

import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A lane's connections by index, and the hand-off of removed ones to the lane's progress thread.
 *
 * <p>Copy-on-write: control threads add and remove under this table's lock; the progress thread reads without one.
 * Indexes are never reused, so a completion still queued for a removed connection finds no connection rather than a
 * newer one. A removed connection is not closed here: the progress thread may be posting to its queue pair or holding
 * it from a snapshot of the table at that moment. It goes to {@link #retired} instead, which only the progress thread
 * drains ({@link CompletionPath}); that thread reports its outstanding requests as failed and destroys the queue pair
 * when nothing of its own can touch it any more.
 */
final class ConnectionTable {
    private volatile Connection[] table = new Connection[0];
    private final ConcurrentLinkedQueue<Connection> retired = new ConcurrentLinkedQueue<>();

    /** @return the index the next {@link #add} will give */
    synchronized int nextIndex() {
        return table.length;
    }

    /** Publishes {@code c}, made ready for the progress thread, at its index ({@link #nextIndex} before). */
    synchronized void add(Connection c) {
        Connection[] t = table;
        if (c.index != t.length) {
            throw new IllegalStateException("connection " + c.index + " is not the next one (" + t.length + ")");
        }
        Connection[] next = Arrays.copyOf(t, t.length + 1);
        next[c.index] = c;
        table = next;
    }

    /** @return the current connections (null slots where removed); a snapshot the reader must not modify */
    Connection[] snapshot() {
        return table;
    }

    /** @return connection {@code index}, or null when there is none (never made, or removed) */
    Connection find(int index) {
        Connection[] t = table;
        return index >= 0 && index < t.length ? t[index] : null;
    }

    /** @return connection {@code index} of {@code snapshot}, looking it up when made after the snapshot */
    Connection find(Connection[] snapshot, int index) {
        return index >= 0 && index < snapshot.length ? snapshot[index] : find(index);
    }

    /**
     * Unpublishes connection {@code index} and hands it to the progress thread for closing.
     *
     * @throws IllegalArgumentException when there is no such connection
     */
    synchronized void remove(int index) {
        Connection c = find(index);
        if (c == null) {
            throw new IllegalArgumentException(
                    "lane has no connection " + index + " (never prepared, or disconnected)");
        }
        Connection[] next = table.clone();
        next[index] = null;
        table = next; // unpublished before the hand-off: once the progress thread takes it, no lookup finds it
        retired.add(c);
    }

    /** @return the next removed connection for the progress thread to close, or null */
    Connection takeRetired() {
        return retired.poll();
    }

    /** For closing the lane once no progress thread runs: every connection, published or retired and not yet taken. */
    synchronized Connection[] removeAll() {
        Connection[] t = table;
        table = new Connection[0];
        Connection[] out = Arrays.copyOf(t, t.length + retired.size());
        int n = t.length;
        for (Connection c; (c = retired.poll()) != null && n < out.length; ) {
            out[n++] = c;
        }
        return out;
    }
}
