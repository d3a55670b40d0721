package io.rdma4j.engine.internal;

import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.topology.Location;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.Ranked;
import io.rdma4j.topology.RdmaDevice;
import io.rdma4j.topology.RdmaPort;
import io.rdma4j.topology.Topology;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Picks the NIC a storage connection leaves by: the NICs the topology ranks for the memory's location (GPU or NUMA
 * node), best first, then RDMA devices without a PCI function (Soft-RoCE, siw); the first with a usable address of the
 * target's family on one of its network interfaces wins. When none has one, the kernel's route is used and the reason
 * says why: a NIC is never invented.
 */
public final class NicChooser {
    /** Addresses of a network interface by name; the live one asks {@link NetworkInterface}. */
    @FunctionalInterface
    public interface Interfaces {
        List<InetAddress> addresses(String netdev);

        Interfaces LIVE = netdev -> {
            try {
                NetworkInterface n = NetworkInterface.getByName(netdev);
                return n == null || !n.isUp() ? List.of() : Collections.list(n.getInetAddresses());
            } catch (SocketException e) {
                return List.of();
            }
        };
    }

    /**
     * The choice.
     *
     * @param nic the NIC's name ({@code mlx5_0}, {@code rxe0}) or PCI address, null for the kernel's route
     * @param netdev its network interface, null for the kernel's route
     * @param source the local address to leave from, null for the kernel's route
     * @param level the NIC's distance to the memory (PIX, PXB, PHB, NODE, SYS), {@code -} when not ranked
     * @param reason why, in words
     */
    public record Choice(String nic, String netdev, InetAddress source, String level, String reason) {
        /** @return e.g. {@code mlx5_0 (ib0 10.1.0.5)} or {@code kernel route} */
        public String label() {
            return nic == null ? "kernel route" : nic + " (" + netdev + " " + source.getHostAddress() + ")";
        }
    }

    private NicChooser() {}

    /**
     * @param topology the machine's topology, null when it could not be read
     * @param topologyProblem why it could not be read (when null)
     * @param memory where the memory the connection serves lives
     * @param target the target's address, null when it does not resolve here
     * @param interfaces addresses of network interfaces
     */
    public static Choice choose(
            Topology topology,
            String topologyProblem,
            MemoryLocation memory,
            InetAddress target,
            Interfaces interfaces) {
        if (target == null) {
            return new Choice(
                    null,
                    null,
                    null,
                    "-",
                    "the target's host does not resolve here, so no NIC can be matched to it: kernel route");
        }
        if (target.isLoopbackAddress()) {
            return new Choice(
                    null,
                    null,
                    null,
                    "-",
                    "the target " + target.getHostAddress() + " is on this host's loopback: no NIC carries it");
        }
        if (topology == null) {
            return new Choice(
                    null,
                    null,
                    null,
                    "-",
                    "topology unreadable (" + topologyProblem + "): kernel route to " + target.getHostAddress());
        }
        List<String> skipped = new ArrayList<>();
        List<Ranked<PciDevice>> ranked;
        String rankedFor;
        try {
            Location from = memory.gpuAddress() != null
                    ? new Location.Device(PciAddress.parse(memory.gpuAddress()))
                    : memory.numaNode() >= 0 ? new Location.Numa(memory.numaNode()) : null;
            ranked = from == null ? null : topology.rankNics(from);
            rankedFor = from == null ? null : memory.toString();
        } catch (RuntimeException e) {
            ranked = null;
            rankedFor = null;
            skipped.add(memory + " is not in the topology (" + e.getMessage() + ")");
        }
        List<Candidate> candidates = new ArrayList<>();
        if (ranked != null) {
            for (Ranked<PciDevice> r : ranked) {
                candidates.add(new Candidate(
                        name(r.target()), netdevs(r.target()), r.level().name()));
            }
        } else {
            for (PciDevice d : topology.nics()) {
                candidates.add(new Candidate(name(d), netdevs(d), "-"));
            }
        }
        int pciNics = candidates.size();
        for (RdmaDevice r : topology.rdmaDevices()) {
            if (r.pci().isEmpty()) {
                Set<String> nd = new LinkedHashSet<>();
                r.ports().stream()
                        .filter(p -> p.state().isEmpty() || p.active())
                        .forEach(p -> nd.addAll(p.netdevs()));
                candidates.add(new Candidate(r.name(), List.copyOf(nd), "-"));
            }
        }
        String family = target instanceof Inet4Address ? "IPv4" : "IPv6";
        for (Candidate c : candidates) {
            if (c.netdevs.isEmpty()) {
                skipped.add(c.name + " has no network interface");
                continue;
            }
            for (String nd : c.netdevs) {
                for (InetAddress a : interfaces.addresses(nd)) {
                    if ((a instanceof Inet4Address) == (target instanceof Inet4Address)
                            && !a.isLoopbackAddress()
                            && !a.isLinkLocalAddress()
                            && !a.isAnyLocalAddress()) {
                        boolean pci = candidates.indexOf(c) < pciNics;
                        String why = (pci
                                        ? (rankedFor != null
                                                ? c.name + " is the best-ranked NIC for " + rankedFor + " (" + c.level
                                                        + ")"
                                                : c.name
                                                        + " is the first NIC (the memory's location is unknown: register it with a MemoryLocation to rank NICs)")
                                        : c.name + " is an RDMA device without a PCI function ("
                                                + (pciNics == 0
                                                        ? "no PCI RDMA NIC in the topology"
                                                        : "no PCI RDMA NIC has a usable address")
                                                + ")")
                                + " with " + family + " address " + a.getHostAddress() + " on " + nd
                                + (skipped.isEmpty() ? "" : "; skipped: " + String.join("; ", skipped));
                        return new Choice(c.name, nd, a, c.level, why);
                    }
                }
            }
            skipped.add(c.name + " has no usable " + family + " address on " + String.join(",", c.netdevs));
        }
        String why = candidates.isEmpty()
                ? "no RDMA NIC in the topology (" + topology.source() + ")"
                : String.join("; ", skipped);
        return new Choice(null, null, null, "-", why + ": kernel route to " + target.getHostAddress());
    }

    private record Candidate(String name, List<String> netdevs, String level) {}

    private static String name(PciDevice d) {
        return d.names().isEmpty() ? d.address().toString() : d.names().getFirst();
    }

    private static List<String> netdevs(PciDevice d) {
        Set<String> out = new LinkedHashSet<>();
        for (RdmaPort p : d.ports()) {
            if (p.state().isEmpty() || p.active()) {
                out.addAll(p.netdevs());
            }
        }
        out.addAll(d.netdevs());
        return List.copyOf(out);
    }
}
