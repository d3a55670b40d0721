package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** hwloc/linux/40intel64-2g2n4c+pcilocality: 4 NUMA nodes, a QLogic HCA {@code qib0} (class 0x0c06) at 43:00.0. */
class PciLocalityCaptureTest {
    @TempDir
    static Path tmp;
    static Topology topo;

    @BeforeAll
    static void unpack() throws Exception {
        topo = Topology.builder().fsroot(Fixtures.unpack("hwloc/linux/40intel64-2g2n4c+pcilocality.tar.bz2", tmp))
                .nicFilter("").build();
    }

    @Test
    void qlogicHcaClass0c06IsANic() {
        PciDevice qib = topo.device("0000:43:00.0").orElseThrow();
        assertEquals(0x0c0600, qib.classCode());
        assertEquals(DeviceKind.NIC, qib.kind());
        assertEquals(java.util.List.of("qib0"), qib.names());
        assertEquals(java.util.List.of("ib0"), qib.netdevs());
    }

    @Test
    void contradictoryLocalityIsReportedAndNumaNode2KeptNeverSilentlyNode0() {
        PciDevice qib = topo.device("0000:43:00.0").orElseThrow();
        assertEquals(2, qib.numaNode());
        assertEquals(NumaSource.NUMA_NODE, qib.numaSource());
        String conflict = qib.localityConflict().orElseThrow();
        assertTrue(conflict.contains("numa_node=2") && conflict.contains("0-39"), conflict);
        assertTrue(topo.warnings().contains(conflict));
    }

    @Test
    void hostMemoryOnNode2RanksTheHcaNodeAndOtherNodesSys() {
        assertEquals(Level.NODE, topo.rankNics("numa:2").get(0).level());
        assertEquals(Level.SYS, topo.rankNics("numa:0").get(0).level());
    }

    @Test
    void fourNumaNodesWithInterleavedCpus() {
        assertEquals(4, topo.numaNodes().size());
        assertEquals(10, topo.numaNode(2).orElseThrow().cpus().size());
        assertEquals(2, topo.numaNode(2).orElseThrow().cpus().get(0));
        assertEquals(20, topo.numaNode(2).orElseThrow().distanceTo(3));
    }

    @Test
    void devicesWithNoContradictionCarryNone() {
        assertTrue(topo.devices().stream().filter(d -> !d.address().equals(Fixtures.bdf("0000:43:00.0")))
                .allMatch(d -> d.localityConflict().isEmpty()));
    }

    @Test
    void agreesWithHwlocsOwnReportOfTheSameCapture() {
        Topology hwloc = Fixtures.xml("hwloc/linux/40intel64-2g2n4c+pcilocality.xml");
        List<PciDevice> placed = topo.devices().stream().filter(d -> d.kind() != DeviceKind.OTHER).toList();
        assertFalse(placed.isEmpty());
        for (PciDevice d : placed) {
            PciDevice h = hwloc.device(d.address()).orElseThrow(() -> new AssertionError("hwloc lacks " + d.address()));
            assertEquals(d.kind(), h.kind(), d.address().toString());
            assertEquals(d.path().stream().map(PciBridge::address).toList(), h.path().stream().map(PciBridge::address).toList());
            if (h.numaNode() >= 0) {
                assertEquals(h.numaNode(), d.numaNode(), d.address().toString());
            }
        }
        assertEquals(hwloc.numaNodes().stream().map(NumaNode::cpus).toList(), topo.numaNodes().stream().map(NumaNode::cpus).toList());
    }
}
