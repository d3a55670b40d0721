package io.rdma4j.engine;

import io.rdma4j.Rdma4jException;

/** A transfer failed; subclasses say how. The message names the peer, the lanes and the native errors involved. */
public class TransferException extends Rdma4jException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public TransferException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public TransferException(String message, Throwable cause) {
        super(message, cause);
    }
}
