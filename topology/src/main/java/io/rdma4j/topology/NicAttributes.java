package io.rdma4j.topology;

/**
 * What an engine backend tells peers and its planner about one NIC, read from the topology: one rule for every backend.
 *
 * @param name the name looked up: a verbs device ({@code mlx5_0}) or a network interface ({@code eth0})
 * @param pciAddress the PCI function {@code dddd:bb:dd.f}; {@code null} when the NIC has none (Soft-RoCE, loopback) or
 *     its domain needs more than four hex digits, which the wire's {@code Lane.pci_address} cannot carry
 * @param numaNode the function's NUMA node; without a function, 0 on a machine with one node; else -1 (unknown)
 * @param rateGbps the fastest active port's rate (any port's when none is active), else {@link #UNKNOWN_RATE_GBPS};
 *     always > 0, used as the lane's weight
 */
public record NicAttributes(String name, String pciAddress, int numaNode, double rateGbps) {
    /** The rate assumed where sysfs gives none (loopback, shared memory, virtual NICs), in Gbit/s. */
    public static final double UNKNOWN_RATE_GBPS = 100;

    /** {@return attributes saying nothing is known about {@code name}} */
    public static NicAttributes unknown(String name) {
        return new NicAttributes(name, null, -1, UNKNOWN_RATE_GBPS);
    }

    /**
     * Scans this machine's sysfs once for a backend opening its NICs. Never throws: where sysfs cannot be read the
     * result answers {@link #unknown} for every name.
     *
     * @return a lookup by NIC name
     */
    public static java.util.function.Function<String, NicAttributes> scanLive() {
        Topology t;
        try {
            // the backend applies its own NIC filter; the environment's must not hide devices from the lookup
            t = Topology.builder().live().nicFilter("").build();
        } catch (RuntimeException e) {
            return NicAttributes::unknown;
        }
        return t::nicAttributes;
    }
}
