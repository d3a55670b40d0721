package io.rdma4j.rendezvous;

/**
 * A membership change seen through {@link Rendezvous#watch}.
 *
 * @param kind what happened
 * @param peer the peer (its last announced value for {@link Kind#LEFT}); {@code null} for {@link Kind#SYNCED}
 * @param reason why
 * @param revision the directory's change counter, increasing
 */
public record PeerEvent(Kind kind, PeerInfo peer, Reason reason, long revision) {
    public enum Kind {
        /** Announced (also sent for each peer present when the watch starts). */
        JOINED,
        /** Re-announced with different information. */
        UPDATED,
        /** Withdrew or expired. */
        LEFT,
        /** All peers present at the start were sent; later events are live. */
        SYNCED
    }

    public enum Reason {
        UNSPECIFIED,
        ANNOUNCED,
        WITHDRAWN,
        EXPIRED
    }
}
