package io.rdma4j.rendezvous.internal;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.rendezvous.RendezvousException;

/** Turns a failed call into a {@link RendezvousException} that says where, what, and what to do. */
public final class ClientErrors {
    private ClientErrors() {}

    public static RendezvousException of(String service, String target, String call, StatusRuntimeException e) {
        Status s = e.getStatus();
        String hint = switch (s.getCode()) {
            case UNAVAILABLE ->
                " (is the " + service + " running and reachable at " + target
                        + "? start a directory with ./rdma4j rendezvous --port PORT)";
            case DEADLINE_EXCEEDED ->
                " (no answer within the call timeout; the " + service + " is overloaded or unreachable)";
            case UNAUTHENTICATED -> " (pass the server's token: Security.token(...) / --token)";
            default -> "";
        };
        String desc = s.getDescription() == null
                ? (s.getCause() == null ? "" : s.getCause().toString())
                : s.getDescription();
        return new RendezvousException(
                s.getCode(),
                service + " at " + target + ": " + call + " failed: " + s.getCode()
                        + (desc.isEmpty() ? "" : ": " + desc) + hint,
                e);
    }
}
