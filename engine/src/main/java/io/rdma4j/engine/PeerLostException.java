package io.rdma4j.engine;

/** The peer disappeared (its lease expired, it withdrew, or every connection to it failed); its transfers fail with this. Other peers are unaffected. */
public class PeerLostException extends TransferException {
    public PeerLostException(String message) {
        super(message);
    }

    public PeerLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
