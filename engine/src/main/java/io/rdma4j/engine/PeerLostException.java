package io.rdma4j.engine;

/**
 * The peer disappeared (its lease expired, it withdrew, or every connection to it failed); its transfers fail with
 * this. Other peers are unaffected.
 */
public class PeerLostException extends TransferException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public PeerLostException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public PeerLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
