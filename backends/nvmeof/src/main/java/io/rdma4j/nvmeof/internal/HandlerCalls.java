package io.rdma4j.nvmeof.internal;

import io.rdma4j.nvmeof.IoCompletion;

/**
 * The calls a polled queue makes to its caller's {@link IoCompletion} during one poll: which handler, how many
 * completions it got, and the first exception it threw, kept until the poll has reported everything it reaped so no
 * completion is lost to it. It also refuses a poll from inside the handler. One thread at a time uses it.
 */
public final class HandlerCalls {
    private final String name;
    private IoCompletion handler;
    private int completed;
    private Throwable thrown;
    private boolean polling;

    /** @param name the queue's, for the refusal's message */
    public HandlerCalls(String name) {
        this.name = name;
    }

    /** A poll starts with {@code handler}; refused from inside a handler of this queue. */
    public void begin(IoCompletion handler) {
        if (polling) {
            throw new IllegalStateException(
                    name + ": poll called from inside a completion handler; return from it first");
        }
        polling = true;
        this.handler = handler;
        completed = 0;
    }

    /** Tells the handler that the command tagged {@code tag} finished with {@code status}. */
    public void report(long tag, int status) {
        completed++;
        try {
            handler.complete(tag, status);
        } catch (RuntimeException | Error e) {
            if (thrown == null) {
                thrown = e;
            } else if (thrown != e) {
                thrown.addSuppressed(e);
            }
        }
    }

    /** @return completions reported in the poll in progress */
    public int completed() {
        return completed;
    }

    /**
     * The poll reported everything: throws what the handler threw first, if it did.
     *
     * @return completions reported
     */
    public int finish() {
        Throwable t = thrown;
        if (t != null) {
            thrown = null;
            if (t instanceof Error e) {
                throw e;
            }
            throw (RuntimeException) t;
        }
        return completed;
    }

    /** The poll is over (in a finally block). */
    public void end() {
        polling = false;
        handler = null;
    }

    /** @return whether a poll is in progress (its handler may be running) */
    public boolean polling() {
        return polling;
    }
}
