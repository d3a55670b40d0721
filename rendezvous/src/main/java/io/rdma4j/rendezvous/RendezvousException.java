package io.rdma4j.rendezvous;

import io.grpc.Status;
import io.rdma4j.Rdma4jException;

/** A rendezvous call failed; {@link #code()} is the gRPC status the other side (or the transport) gave. */
public final class RendezvousException extends Rdma4jException {
    private final Status.Code code;

    public RendezvousException(Status.Code code, String message) {
        super(message);
        this.code = code;
    }

    public RendezvousException(Status.Code code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** @return the gRPC status code, e.g. {@code PERMISSION_DENIED} when an access list excludes the caller */
    public Status.Code code() {
        return code;
    }
}
