package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What hwloc's XML exports of an HP SL390 (3 Tesla M2070, a ConnectX-2) and a DGX-2 must yield, checked on hwloc's
 * files ({@link HwlocXmlFixturesTest}) and on files written here with the same facts ({@link HwlocXmlShapesTest}).
 */
abstract class HwlocXmlChecks {
    abstract Topology sl390();

    abstract Topology dgx2();

    /** V100s in the DGX-2 file: 16 in hwloc's, fewer in the cut-down one. */
    abstract int dgx2Gpus();

    /** NVSwitches in the DGX-2 file: 12 in hwloc's, fewer in the cut-down one. */
    abstract int dgx2NvSwitches();

    @Test
    void teslaM2070At06ReachesTheConnectX2AtPhb() {
        Ranked<PciDevice> best = sl390().rankNics("0000:06:00.0").get(0);
        assertEquals(bdf("0000:05:00.0"), best.address());
        assertEquals(Level.PHB, best.level());
    }

    @Test
    void teslasAt11And14ReachTheSameHcaAtSys() {
        for (String gpu : List.of("0000:11:00.0", "0000:14:00.0")) {
            List<Ranked<PciDevice>> nics = sl390().rankNics(gpu);
            assertEquals(1, nics.size());
            assertEquals(bdf("0000:05:00.0"), nics.get(0).address());
            assertEquals(Level.SYS, nics.get(0).level(), gpu);
        }
    }

    @Test
    void threeTeslaGpusAndOneConnectX2Class0c06() {
        assertEquals(
                List.of(bdf("0000:06:00.0"), bdf("0000:11:00.0"), bdf("0000:14:00.0")),
                sl390().devices(DeviceKind.GPU).stream().map(PciDevice::address).toList());
        PciDevice hca = sl390().device("0000:05:00.0").orElseThrow();
        assertEquals(DeviceKind.NIC, hca.kind());
        assertEquals(0x0c0600, hca.classCode());
        assertEquals("mlx4_0", hca.names().get(0));
        assertTrue(hca.netdevs().contains("ib0"));
    }

    @Test
    void atiEs1000At0103IsABmcNotAGpu() {
        PciDevice es1000 = sl390().device("0000:01:03.0").orElseThrow();
        assertEquals(0x1002, es1000.vendor());
        assertEquals(0x030000, es1000.classCode());
        assertEquals(DeviceKind.OTHER, es1000.kind());
    }

    @Test
    void intel82576EthernetIsNotAnRdmaNic() {
        assertEquals(
                DeviceKind.OTHER, sl390().device("0000:04:00.0").orElseThrow().kind());
        assertEquals(1, sl390().nics().size());
    }

    @Test
    void numaNodesAndDistancesFromHwloc() {
        assertEquals(2, sl390().numaNodes().size());
        assertEquals(12, sl390().numaNode(0).orElseThrow().cpus().size());
        assertEquals(20, sl390().numaNode(0).orElseThrow().distanceTo(1));
        assertEquals(19316633600L, sl390().numaNode(0).orElseThrow().memoryBytes());
    }

    @Test
    void dgx2HasSixteenV100InPairsUnderLeafSwitches() {
        List<PciDevice> gpus = dgx2().devices(DeviceKind.GPU);
        assertEquals(dgx2Gpus(), gpus.size());
        // a pair shares every bridge but its own downstream port
        Map<List<PciAddress>, List<PciDevice>> byLeaf = gpus.stream()
                .collect(Collectors.groupingBy(g -> g.path().subList(0, g.path().size() - 1).stream()
                        .map(PciBridge::address)
                        .toList()));
        assertEquals(dgx2Gpus() / 2, byLeaf.size());
        byLeaf.values().forEach(pair -> assertEquals(2, pair.size()));
        assertEquals(Level.PXB, dgx2().level(bdf("0000:34:00.0"), bdf("0000:36:00.0")));
        assertEquals(Level.SYS, dgx2().level(bdf("0000:34:00.0"), bdf("0000:b7:00.0")));
    }

    @Test
    void dgx2TwelveNvSwitchesAreNeitherGpusNorNics() {
        List<PciDevice> switches = dgx2().devices(DeviceKind.NVSWITCH);
        assertEquals(dgx2NvSwitches(), switches.size());
        assertTrue(switches.stream().filter(s -> s.classCode() >= 0).allMatch(s -> s.classCode() >> 8 == 0x0680));
        assertTrue(dgx2().devices(DeviceKind.NIC).isEmpty());
    }

    @Test
    void dgx2WithoutNicsRanksNothingAndSaysSo() {
        assertTrue(dgx2().affinity().stream().allMatch(a -> a.nics().isEmpty()));
        assertEquals(dgx2Gpus(), dgx2().affinity().size());
        TopologyException e =
                org.junit.jupiter.api.Assertions.assertThrows(TopologyException.class, dgx2()::requireNics);
        assertTrue(e.getMessage().contains("no RDMA NIC"), e.getMessage());
    }
}
