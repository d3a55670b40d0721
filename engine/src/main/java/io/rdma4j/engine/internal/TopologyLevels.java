package io.rdma4j.engine.internal;

import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.spi.LaneDescriptor;
import java.nio.file.Path;
import java.util.List;

/** Lane levels on this machine. */
final class TopologyLevels implements LaneLevels {
    private final String source;

    private TopologyLevels(String source) {
        this.source = source;
    }

    static LaneLevels create(Path topology, List<LaneDescriptor> lanes) {
        long pci = lanes.stream().filter(l -> l.pciAddress() != null).count();
        String numa = lanes.stream().map(l -> String.valueOf(l.numaNode())).distinct().reduce((a, b) -> a + "," + b).orElse("-1");
        String device = lanes.isEmpty() ? "none" : lanes.getFirst().device();
        String src = pci == 0
                ? "no RDMA NIC on this machine: the " + lanes.size() + " lane(s) are backend endpoints on " + device + " (NUMA node " + numa
                + "), ranked by NUMA node only"
                : pci + " lane(s) on PCI NICs, ranked by NUMA node";
        return new TopologyLevels(src);
    }

    @Override
    public Level level(String pciAddress, int numaNode, MemoryLocation memory) {
        return LaneLevels.byNuma(numaNode, memory.numaNode());
    }

    @Override
    public String source() {
        return source;
    }
}
