package io.rdma4j.topology;

import io.rdma4j.Rdma4jException;

/** A topology source could not be read or a query cannot be answered; the message names the problem and the fix. */
public class TopologyException extends Rdma4jException {
    public TopologyException(String message) {
        super(message);
    }

    public TopologyException(String message, Throwable cause) {
        super(message, cause);
    }
}
