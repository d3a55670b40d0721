package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * What hwloc/linux/2pa-pcidomain32bits must yield (trap 4): a single-node QEMU guest whose virtio disk sits in PCI
 * domain 10000 (5 hex digits); checked on the capture ({@link PciDomain32BitsCaptureTest}) and on a tree written here
 * ({@link PciDomain32BitsShapeTest}).
 */
abstract class PciDomain32BitsChecks {
    private static final Map<Path, Topology> SCANNED = new ConcurrentHashMap<>();

    /** @return the folder holding the machine's {@code sys/}, made on first use */
    abstract Path root();

    final Topology topo() {
        return SCANNED.computeIfAbsent(
                root(), r -> Topology.builder().fsroot(r).nicFilter("").build());
    }

    @Test
    void fiveHexDigitDomain10000Parses() {
        PciDevice d = topo().device("10000:00:04.0").orElseThrow();
        assertEquals(0x10000, d.address().domain());
        assertEquals("10000:00:04.0", d.address().toString());
        assertEquals("pci10000:00", d.hostBridge());
        assertTrue(d.path().isEmpty());
    }

    @Test
    void numaNodeMinusOneOnASingleNodeGuestIsNode0() {
        PciDevice d = topo().device("0000:00:03.0").orElseThrow();
        assertEquals(0, d.numaNode());
        assertEquals(NumaSource.SINGLE_NODE, d.numaSource());
    }

    @Test
    void guestWithoutGpusOrNicsHasEmptyAffinityAndRankings() {
        assertTrue(topo().affinity().isEmpty());
        assertTrue(topo().nics().isEmpty());
        assertTrue(topo().rankNics("numa:0").isEmpty());
        assertEquals(
                DeviceKind.OTHER, topo().device("0000:00:02.0").orElseThrow().kind()); // Cirrus VGA
    }
}
