package io.rdma4j.engine;

/** A chunk failed and no other lane was left to retry it on; the message names each lane tried and its native error. */
public class LaneFailureException extends TransferException {
    public LaneFailureException(String message) {
        super(message);
    }

    public LaneFailureException(String message, Throwable cause) {
        super(message, cause);
    }
}
