package io.rdma4j;

/** Root of every exception rdma4j throws. Unchecked: control-path failures are not recoverable by the caller's type system. */
public class Rdma4jException extends RuntimeException {
    public Rdma4jException(String message) {
        super(message);
    }

    public Rdma4jException(String message, Throwable cause) {
        super(message, cause);
    }
}
