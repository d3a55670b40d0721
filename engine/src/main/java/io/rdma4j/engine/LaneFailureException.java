package io.rdma4j.engine;

/** A chunk failed and no other lane was left to retry it on; the message names each lane tried and its native error. */
public class LaneFailureException extends TransferException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public LaneFailureException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public LaneFailureException(String message, Throwable cause) {
        super(message, cause);
    }
}
