package io.rdma4j.engine;

import io.rdma4j.Rdma4jException;

/** A transfer failed; subclasses say how. The message names the peer, the lanes and the native errors involved. */
public class TransferException extends Rdma4jException {
    public TransferException(String message) {
        super(message);
    }

    public TransferException(String message, Throwable cause) {
        super(message, cause);
    }
}
