package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * What hwloc/linux/40intel64-2g2n4c+pcilocality must yield (trap 3): 4 NUMA nodes with interleaved CPUs and a QLogic
 * HCA {@code qib0} (class 0x0c06) at 43:00.0 whose {@code numa_node=2} contradicts its {@code local_cpulist} of every
 * CPU; checked on the capture ({@link PciLocalityCaptureTest}) and on a tree written here
 * ({@link PciLocalityShapeTest}).
 */
abstract class PciLocalityChecks {
    private static final Map<Path, Topology> SCANNED = new ConcurrentHashMap<>();

    /** @return the folder holding the machine's {@code sys/}, made on first use */
    abstract Path root();

    final Topology topo() {
        return SCANNED.computeIfAbsent(
                root(), r -> Topology.builder().fsroot(r).nicFilter("").build());
    }

    @Test
    void qlogicHcaClass0c06IsANic() {
        PciDevice qib = topo().device("0000:43:00.0").orElseThrow();
        assertEquals(0x0c0600, qib.classCode());
        assertEquals(DeviceKind.NIC, qib.kind());
        assertEquals(java.util.List.of("qib0"), qib.names());
        assertEquals(java.util.List.of("ib0"), qib.netdevs());
    }

    @Test
    void contradictoryLocalityIsReportedAndNumaNode2KeptNeverSilentlyNode0() {
        PciDevice qib = topo().device("0000:43:00.0").orElseThrow();
        assertEquals(2, qib.numaNode());
        assertEquals(NumaSource.NUMA_NODE, qib.numaSource());
        String conflict = qib.localityConflict().orElseThrow();
        assertTrue(conflict.contains("numa_node=2") && conflict.contains("0-39"), conflict);
        assertTrue(topo().warnings().contains(conflict));
    }

    @Test
    void hostMemoryOnNode2RanksTheHcaNodeAndOtherNodesSys() {
        assertEquals(Level.NODE, topo().rankNics("numa:2").get(0).level());
        assertEquals(Level.SYS, topo().rankNics("numa:0").get(0).level());
    }

    @Test
    void fourNumaNodesWithInterleavedCpus() {
        assertEquals(4, topo().numaNodes().size());
        assertEquals(10, topo().numaNode(2).orElseThrow().cpus().size());
        assertEquals(2, topo().numaNode(2).orElseThrow().cpus().get(0));
        assertEquals(20, topo().numaNode(2).orElseThrow().distanceTo(3));
    }

    @Test
    void devicesWithNoContradictionCarryNone() {
        assertTrue(topo().devices().stream()
                .filter(d -> !d.address().equals(Shapes.bdf("0000:43:00.0")))
                .allMatch(d -> d.localityConflict().isEmpty()));
    }
}
