package io.rdma4j;

/** An operation was called on a native object that has been closed. */
public class ClosedException extends Rdma4jException {
    public ClosedException(String what) {
        super(what + " is closed: create a new one, and keep it open while it is in use");
    }
}
