package io.rdma4j.engine.internal;

import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.topology.Location;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.Ranked;
import io.rdma4j.topology.Topology;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Lane levels on this machine from the topology module: a lane on a PCI NIC gets the level the topology ranks that NIC
 * at for the memory's location (GPU or NUMA node). Lanes without a PCI NIC (libfabric shm, tcp over loopback) and
 * machines whose topology cannot be read fall back to NUMA distance, and {@link #source()} says so: NICs are never
 * invented.
 */
final class TopologyLevels implements LaneLevels {
    private final Topology topology;
    private final String source;

    private TopologyLevels(Topology topology, String source) {
        this.topology = topology;
        this.source = source;
    }

    /** Loads {@code fileOrRoot} (NCCL XML file or captured sysfs root), or scans the live machine when null. */
    static Topology load(Path fileOrRoot) {
        if (fileOrRoot == null) {
            return Topology.scan();
        }
        return Files.isDirectory(fileOrRoot) ? Topology.scan(fileOrRoot) : Topology.fromNcclXml(fileOrRoot);
    }

    static LaneLevels create(Path topologyPath, List<LaneDescriptor> lanes) {
        Topology t = null;
        String problem = null;
        try {
            t = load(topologyPath);
        } catch (RuntimeException e) {
            problem = e.getMessage();
        }
        long pci = lanes.stream().filter(l -> l.pciAddress() != null).count();
        String numa = lanes.stream()
                .map(l -> String.valueOf(l.numaNode()))
                .distinct()
                .reduce((a, b) -> a + "," + b)
                .orElse("-1");
        String devices = lanes.stream()
                .map(LaneDescriptor::device)
                .distinct()
                .reduce((a, b) -> a + "," + b)
                .orElse("none");
        String src;
        if (pci == 0) {
            int nics = t == null ? 0 : t.nics().size();
            src = (nics == 0
                            ? "no RDMA NIC in the topology"
                                    + (t == null ? " (" + problem + ")" : " (" + t.source() + ")")
                            : nics + " RDMA NIC(s) in the topology but none under this backend")
                    + ": the " + lanes.size() + " lane(s) are the backend's own " + devices + " endpoints on NUMA node "
                    + numa
                    + ", ranked by NUMA node only";
        } else if (t == null) {
            src = "topology unreadable (" + problem + "): " + pci + " lane(s) on PCI NICs ranked by NUMA node only";
        } else {
            src = pci + " lane(s) on PCI NICs ranked by the topology (" + t.source() + ")";
        }
        return new TopologyLevels(t, src);
    }

    @Override
    public Level level(String pciAddress, int numaNode, MemoryLocation memory) {
        if (pciAddress == null || topology == null) {
            return LaneLevels.byNuma(numaNode, memory.numaNode());
        }
        try {
            Location from = memory.gpuAddress() != null
                    ? new Location.Device(PciAddress.parse(memory.gpuAddress()))
                    : memory.numaNode() >= 0
                            ? new Location.Numa(memory.numaNode())
                            : numaNode >= 0 ? new Location.Numa(numaNode) : null;
            if (from == null) {
                return Level.NODE;
            }
            for (Ranked<PciDevice> r : topology.rankNics(from)) {
                if (r.address() != null && r.address().toString().equals(pciAddress)) {
                    return Level.valueOf(r.level().name());
                }
            }
        } catch (RuntimeException e) {
            // a location the topology does not know (a GPU of another machine): NUMA distance is all we can say
        }
        return LaneLevels.byNuma(numaNode, memory.numaNode());
    }

    @Override
    public String source() {
        return source;
    }
}
