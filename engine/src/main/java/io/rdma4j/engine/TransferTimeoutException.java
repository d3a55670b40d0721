package io.rdma4j.engine;

/** The transfer's deadline passed before it completed; what was still queued is dropped. */
public class TransferTimeoutException extends TransferException {
    public TransferTimeoutException(String message) {
        super(message);
    }

    public TransferTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
