package io.rdma4j.engine;

/** The transfer's deadline passed before it completed; what was still queued is dropped. */
public class TransferTimeoutException extends TransferException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public TransferTimeoutException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public TransferTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
