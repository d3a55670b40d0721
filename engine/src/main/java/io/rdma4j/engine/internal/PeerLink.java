package io.rdma4j.engine.internal;

import io.rdma4j.rendezvous.HandshakeResult;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.PeerInfo;
import java.util.Arrays;

/**
 * Our outgoing relation to one peer generation: the connections from our lanes to its lanes (made lazily through its
 * handshake service), and the notification channel into its inbox.
 */
final class PeerLink {
    final String name;
    final PeerInfo info;
    final long generation;
    /** Which of our own announcements stood when this link was made (see {@link Membership}). */
    final int announcement;
    /** Indexed by our lane: the connection handle to the peer, or -1, and the peer lane it reaches. */
    final int[] connection;

    final int[] remoteLane;
    volatile boolean connected;
    volatile OutChannel channel;
    volatile HandshakeResult session;
    volatile String lostReason;
    /** The lane pairs last ranked for a transfer to this peer, reused while the lanes' state holds. */
    volatile Preparer.Ranked ranked;
    /** The peer's lanes by index, and their NIC names for plans, for indexes up to {@link #INDEXED}. */
    private final LaneInfo[] byIndex;

    private final String[] nicNames;
    /** Lane indexes beyond this (a peer's claim, untrusted) are looked up by scanning, not indexed. */
    private static final int INDEXED = 1024;

    PeerLink(PeerInfo info, int localLanes, int announcement) {
        this.name = info.name();
        this.announcement = announcement;
        this.info = info;
        this.generation = info.generation();
        this.connection = new int[localLanes];
        this.remoteLane = new int[localLanes];
        Arrays.fill(connection, -1);
        Arrays.fill(remoteLane, -1);
        int max = -1;
        for (LaneInfo l : info.lanes()) {
            if (l.index() >= 0 && l.index() < INDEXED) {
                max = Math.max(max, l.index());
            }
        }
        byIndex = new LaneInfo[max + 1];
        nicNames = new String[max + 1];
        for (LaneInfo l : info.lanes()) {
            if (l.index() >= 0 && l.index() < INDEXED && byIndex[l.index()] == null) {
                byIndex[l.index()] = l;
                nicNames[l.index()] = Preparer.remoteNic(l);
            }
        }
    }

    /** {@return the peer's lane {@code lane}, or null} */
    LaneInfo remote(int lane) {
        if (lane >= 0 && lane < INDEXED) {
            return lane < byIndex.length ? byIndex[lane] : null;
        }
        for (LaneInfo l : info.lanes()) {
            if (l.index() == lane) {
                return l;
            }
        }
        return null;
    }

    /** {@return the NIC name of the peer's lane {@code lane} for plans (built once per peer), or "lane N"} */
    String remoteNic(int lane) {
        if (lane >= 0 && lane < nicNames.length && nicNames[lane] != null) {
            return nicNames[lane];
        }
        LaneInfo l = remote(lane);
        return l == null ? "lane " + lane : Preparer.remoteNic(l);
    }

    boolean lost() {
        return lostReason != null;
    }
}
