package io.rdma4j.topology;

import java.util.List;

/**
 * One port of an RDMA device: each active port is a lane the engine can use.
 *
 * @param number port number (1-based, as in verbs)
 * @param linkLayer {@code InfiniBand}, {@code Ethernet} or empty when unknown
 * @param state {@code ACTIVE}, {@code DOWN}... or empty when unknown
 * @param rateGbps signalling rate in Gbit/s (e.g. 400 for NDR), 0 when unknown
 * @param netdevs network interfaces on this port
 */
public record RdmaPort(int number, String linkLayer, String state, double rateGbps, List<String> netdevs) {
    public RdmaPort {
        netdevs = List.copyOf(netdevs);
    }

    /** @return true when the port state is ACTIVE */
    public boolean active() {
        return state.equalsIgnoreCase("ACTIVE");
    }
}
