package io.rdma4j.engine;

/** No peer of that name is announced in the rendezvous. */
public class UnknownPeerException extends io.rdma4j.Rdma4jException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public UnknownPeerException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public UnknownPeerException(String message, Throwable cause) {
        super(message, cause);
    }
}
