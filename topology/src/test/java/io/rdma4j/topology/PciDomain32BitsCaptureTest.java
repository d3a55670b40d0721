package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** hwloc/linux/2pa-pcidomain32bits: a QEMU guest with a PCI domain of 5 hex digits. */
class PciDomain32BitsCaptureTest {
    @TempDir
    static Path tmp;
    static Topology topo;

    @BeforeAll
    static void unpack() throws Exception {
        topo = Topology.builder().fsroot(Fixtures.unpack("hwloc/linux/2pa-pcidomain32bits.tar.bz2", tmp)).nicFilter("").build();
    }

    @Test
    void fiveHexDigitDomain10000Parses() {
        PciDevice d = topo.device("10000:00:04.0").orElseThrow();
        assertEquals(0x10000, d.address().domain());
        assertEquals("10000:00:04.0", d.address().toString());
        assertEquals("pci10000:00", d.hostBridge());
        assertTrue(d.path().isEmpty());
    }

    @Test
    void numaNodeMinusOneOnASingleNodeGuestIsNode0() {
        PciDevice d = topo.device("0000:00:03.0").orElseThrow();
        assertEquals(0, d.numaNode());
        assertEquals(NumaSource.SINGLE_NODE, d.numaSource());
    }

    @Test
    void guestWithoutGpusOrNicsHasEmptyAffinityAndRankings() {
        assertTrue(topo.affinity().isEmpty());
        assertTrue(topo.nics().isEmpty());
        assertTrue(topo.rankNics("numa:0").isEmpty());
        assertEquals(DeviceKind.OTHER, topo.device("0000:00:02.0").orElseThrow().kind()); // Cirrus VGA
    }
}
