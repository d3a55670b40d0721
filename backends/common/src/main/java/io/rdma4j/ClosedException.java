package io.rdma4j;

/**
 * An operation was called on something that has been closed: an engine, a buffer handle, a volume, a native object, or
 * memory whose arena was closed.
 */
public class ClosedException extends Rdma4jException {
    /**
     * Creates the exception; the message tells the caller to create a new one.
     *
     * @param what the closed thing, as the message names it
     */
    public ClosedException(String what) {
        super(what + " is closed: create a new one, and keep it open while it is in use");
    }

    /**
     * Creates the exception with its own advice.
     *
     * @param what the closed thing, as the message names it
     * @param whatToDo what the caller should do instead
     */
    public ClosedException(String what, String whatToDo) {
        super(what + " is closed: " + whatToDo);
    }
}
