package io.rdma4j.engine;

import io.rdma4j.InvalidArgumentException;
import java.util.List;

/**
 * Who may receive a published buffer's keys (the directory enforces it).
 *
 * @param peers peer names allowed; empty means any authenticated peer
 */
public record Access(List<String> peers) {
    /** Copies {@code peers}. */
    public Access {
        peers = List.copyOf(peers);
    }

    /** {@return access for any authenticated peer} */
    public static Access anyPeer() {
        return new Access(List.of());
    }

    /**
     * {@return access for the named peers only}
     *
     * @param peers one or more peer names
     * @throws io.rdma4j.InvalidArgumentException when no peer is named
     */
    public static Access only(String... peers) {
        if (peers.length == 0) {
            throw new InvalidArgumentException(
                    "Access.only needs at least one peer name; use Access.anyPeer() for everyone");
        }
        return new Access(List.of(peers));
    }
}
