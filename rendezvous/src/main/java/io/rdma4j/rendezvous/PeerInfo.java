package io.rdma4j.rendezvous;

import java.util.List;
import java.util.Objects;

/**
 * A peer as announced to a directory.
 *
 * @param name unique in the cluster: {@code [A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}}
 * @param handshakeAddress where its {@link HandshakeServer} listens ({@code host:port} or {@code inproc:name}), empty
 *     if none
 * @param host host name, informational
 * @param generation changes whenever the peer's process restarts (see {@link #newGeneration()})
 * @param lanes its lanes; lanes of backends this version does not know were dropped when received
 */
public record PeerInfo(String name, String handshakeAddress, String host, long generation, List<LaneInfo> lanes) {
    public PeerInfo {
        Objects.requireNonNull(name, "name");
        handshakeAddress = handshakeAddress == null ? "" : handshakeAddress;
        host = host == null ? "" : host;
        lanes = List.copyOf(lanes);
    }

    /**
     * @return a generation number for a process that just started: wall-clock nanoseconds, so a restart always compares
     *     higher
     */
    public static long newGeneration() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
