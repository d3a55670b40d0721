package io.rdma4j.rendezvous;

import java.util.Objects;

/**
 * One connected lane pair of a handshake.
 *
 * @param initiatorLane the initiator's {@link LaneInfo#index()}
 * @param responderLane the responder's lane connected to it, carrying the responder's endpoint bytes
 */
public record LanePairing(int initiatorLane, LaneInfo responderLane) {
    public LanePairing {
        if (initiatorLane < 0) {
            throw new IllegalArgumentException("initiatorLane must be >= 0, got " + initiatorLane);
        }
        Objects.requireNonNull(responderLane, "responderLane");
    }
}
