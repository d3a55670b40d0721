package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * What hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms must yield: a 2-socket Xeon with a Xeon Phi, a ConnectX-3
 * ({@code mlx4_0}, class 0x0280), one NVMe drive and an ASPEED BMC; checked on the capture ({@link XeonPhiCaptureTest})
 * and on a tree written here with its facts ({@link XeonPhiShapeTest}).
 */
abstract class XeonPhiChecks {
    private static final Map<Path, Topology> SCANNED = new ConcurrentHashMap<>();

    /** @return the folder holding the machine's {@code sys/} and {@code proc/}, made on first use */
    abstract Path root();

    final Topology topo() {
        return SCANNED.computeIfAbsent(
                root(), r -> Topology.builder().fsroot(r).nicFilter("").build());
    }

    @Test
    void micAndHcaShareHostBridgePci0000_80AtPhb() {
        PciDevice mic = topo().device("0000:83:00.0").orElseThrow();
        PciDevice hca = topo().device("0000:82:00.0").orElseThrow();
        assertEquals("pci0000:80", mic.hostBridge());
        assertEquals("pci0000:80", hca.hostBridge());
        assertEquals(Level.PHB, topo().level(mic.address(), hca.address()));
        List<Ranked<PciDevice>> nics = topo().rankNics(Location.device(mic.address()));
        assertEquals(1, nics.size());
        assertEquals(hca.address(), nics.get(0).address());
        assertEquals(Level.PHB, nics.get(0).level());
    }

    @Test
    void micAndHcaAreOnNuma1() {
        assertEquals(1, topo().device("83:00.0").orElseThrow().numaNode());
        assertEquals(1, topo().device("82:00.0").orElseThrow().numaNode());
    }

    @Test
    void xeonPhiClass0b40IsAnAccelerator() {
        PciDevice mic = topo().device("0000:83:00.0").orElseThrow();
        assertEquals(DeviceKind.ACCELERATOR, mic.kind());
        assertEquals(0x0b4000, mic.classCode());
        assertEquals(List.of(mic), topo().computeDevices());
        assertEquals(1, topo().affinity().size());
    }

    @Test
    void connectX3Class0280WithVerbsDeviceIsANic() {
        PciDevice hca = topo().device("0000:82:00.0").orElseThrow();
        assertEquals(DeviceKind.NIC, hca.kind());
        assertEquals(0x028000, hca.classCode());
        assertEquals("mlx4_0", hca.rdmaDevices().get(0).name());
        assertEquals(List.of("mlx4_0"), hca.names());
        RdmaPort port = hca.ports().get(0);
        assertEquals(56.0, port.rateGbps());
        assertTrue(port.active());
        assertEquals("InfiniBand", port.linkLayer());
        assertEquals(List.of("ib0"), port.netdevs());
    }

    @Test
    void nvmeWithNumaNodeMinusOneBelongsToNuma0ThroughLocalCpulist() {
        PciDevice nvme = topo().device("0000:00:02.0").orElseThrow();
        assertEquals(DeviceKind.NVME, nvme.kind());
        assertEquals(0, nvme.numaNode());
        assertEquals(NumaSource.LOCAL_CPULIST, nvme.numaSource());
        assertEquals(List.of(0, 1, 2, 3), nvme.localCpus());
        NvmeController c = topo().nvmeControllers().stream()
                .filter(x -> x.pci().equals(java.util.Optional.of(nvme.address())))
                .findFirst()
                .orElseThrow();
        assertEquals("nvme0", c.name());
        assertEquals("pcie", c.transport());
        assertEquals(0, c.numaNode());
    }

    @Test
    void nvmeRanksNodeForNuma0AndSysForTheMic() {
        Ranked<NvmeController> fromNode0 = topo().rankNvme(Location.numa(0)).get(0);
        assertEquals(Level.NODE, fromNode0.level());
        assertEquals(bdf("0000:00:02.0"), fromNode0.address());
        assertEquals(
                Level.SYS,
                topo().rankNvme(Location.parse("0000:83:00.0")).get(0).level());
    }

    @Test
    void aspeedBmcVideoAt05IsNotAGpu() {
        PciDevice vga = topo().device("0000:05:00.0").orElseThrow();
        assertEquals(0x1a03, vga.vendor());
        assertEquals(0x030000, vga.classCode());
        assertEquals(DeviceKind.OTHER, vga.kind());
        assertTrue(topo().devices(DeviceKind.GPU).isEmpty());
    }

    @Test
    void bridgeChainComesFromTheResolvedSysfsPath() {
        PciDevice vga = topo().device("0000:05:00.0").orElseThrow();
        assertEquals(
                List.of(bdf("0000:00:1c.0"), bdf("0000:04:00.0")),
                vga.path().stream().map(PciBridge::address).toList());
        assertEquals(0x1a03, vga.path().get(1).vendor());
    }

    @Test
    void scif0WithoutPciParentIsListedAndDoesNotBreakTheScan() {
        RdmaDevice scif = topo().rdmaDevices().stream()
                .filter(r -> r.name().equals("scif0"))
                .findFirst()
                .orElseThrow();
        assertTrue(scif.pci().isEmpty());
        RdmaDevice mlx = topo().rdmaDevices().stream()
                .filter(r -> r.name().equals("mlx4_0"))
                .findFirst()
                .orElseThrow();
        assertEquals(bdf("0000:82:00.0"), mlx.pci().orElseThrow());
        assertEquals(1, topo().nics().size());
    }

    @Test
    void intelI350WithoutRdmaIsNotANic() {
        PciDevice eth = topo().device("0000:02:00.0").orElseThrow();
        assertEquals(0x020000, eth.classCode());
        assertEquals(DeviceKind.OTHER, eth.kind());
    }

    @Test
    void twoNumaNodesWithCpusMemoryAndDistances() {
        assertEquals(2, topo().numaNodes().size());
        NumaNode n1 = topo().numaNode(1).orElseThrow();
        assertEquals(List.of(8, 9, 10, 11, 12, 13, 14, 15), n1.cpus());
        assertTrue(n1.hasCpus());
        assertTrue(n1.memoryBytes() > 0);
        assertEquals(21, n1.distanceTo(0));
        assertEquals(10, n1.distanceTo(1));
    }

    @Test
    void summaryFromTheCapturedProc() {
        SystemSummary s = SystemSummary.fromProc(root());
        assertTrue(s.cpuModel().contains("E5-2680"), s.cpuModel());
        assertEquals(2, s.packages());
        assertEquals(16, s.logicalCpus());
        assertTrue(s.memoryBytes() > 0);
        assertFalse(s.source().isEmpty());
    }
}
