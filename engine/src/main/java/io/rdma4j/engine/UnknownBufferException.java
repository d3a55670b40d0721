package io.rdma4j.engine;

/** The peer published no buffer of that name, or not to us. */
public class UnknownBufferException extends io.rdma4j.Rdma4jException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public UnknownBufferException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public UnknownBufferException(String message, Throwable cause) {
        super(message, cause);
    }
}
