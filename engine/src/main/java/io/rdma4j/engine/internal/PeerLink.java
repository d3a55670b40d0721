package io.rdma4j.engine.internal;

import io.rdma4j.rendezvous.HandshakeResult;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.PeerInfo;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Our outgoing relation to one peer generation: the connections from our lanes to its lanes (made lazily through its
 * handshake service), the notification channel into its inbox, and the transfers in flight to it.
 */
final class PeerLink {
    final String name;
    final PeerInfo info;
    final long generation;
    /** Indexed by our lane: the connection handle to the peer, or -1, and the peer lane it reaches. */
    final int[] connection;

    final int[] remoteLane;
    volatile boolean connected;
    volatile OutChannel channel;
    volatile HandshakeResult session;
    volatile String lostReason;
    final Set<TransferImpl> active = ConcurrentHashMap.newKeySet();

    PeerLink(PeerInfo info, int localLanes) {
        this.name = info.name();
        this.info = info;
        this.generation = info.generation();
        this.connection = new int[localLanes];
        this.remoteLane = new int[localLanes];
        Arrays.fill(connection, -1);
        Arrays.fill(remoteLane, -1);
    }

    LaneInfo remote(int lane) {
        for (LaneInfo l : info.lanes()) {
            if (l.index() == lane) {
                return l;
            }
        }
        return null;
    }

    boolean lost() {
        return lostReason != null;
    }
}
