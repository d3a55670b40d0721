package io.rdma4j.engine;

/** The peer published no buffer of that name, or not to us. */
public class UnknownBufferException extends io.rdma4j.Rdma4jException {
    public UnknownBufferException(String message) {
        super(message);
    }

    public UnknownBufferException(String message, Throwable cause) {
        super(message, cause);
    }
}
