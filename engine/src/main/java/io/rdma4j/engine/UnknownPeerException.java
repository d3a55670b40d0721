package io.rdma4j.engine;

/** No peer of that name is announced in the rendezvous. */
public class UnknownPeerException extends io.rdma4j.Rdma4jException {
    public UnknownPeerException(String message) {
        super(message);
    }

    public UnknownPeerException(String message, Throwable cause) {
        super(message, cause);
    }
}
