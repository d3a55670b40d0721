package io.rdma4j;

/** A backend or native library was used on a machine where it cannot load. The message says what to install. */
public class BackendUnavailableException extends Rdma4jException {
    public BackendUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
