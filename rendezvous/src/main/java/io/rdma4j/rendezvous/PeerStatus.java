package io.rdma4j.rendezvous;

import java.util.List;

/**
 * An announced peer as an operator sees it: its record, its lease, and the buffers it has published.
 *
 * @param peer the announcement
 * @param leaseMillis the lease it announced with
 * @param leaseRemainingMillis how long until the lease runs out unless renewed; -1 when unknown (it left meanwhile)
 * @param buffers names of its published buffers, in name order
 */
public record PeerStatus(PeerInfo peer, long leaseMillis, long leaseRemainingMillis, List<String> buffers) {
    public PeerStatus {
        buffers = List.copyOf(buffers);
    }
}
