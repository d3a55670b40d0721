package io.rdma4j.nvmeof;

/**
 * The connection to the controller is gone (closed by the target, reset, timed out, or closed by this host while
 * commands were outstanding). Call {@link Controller#reconnect()} to rebuild the queues.
 */
public class NvmeConnectionException extends NvmeException {
    public NvmeConnectionException(String message) {
        super(message);
    }

    public NvmeConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
