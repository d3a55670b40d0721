package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What the NCCL topology files that AWS, Azure and OCI publish for their GPU shapes must yield (the ground truth of
 * ../shared/topology/README.md), checked on the published files ({@link CloudTopologyFilesTest}) and on files written
 * here with the same facts ({@link CloudShapesTest}).
 */
abstract class CloudTopologyChecks {
    abstract Topology p4d();

    abstract Topology p5();

    abstract Topology ndv2();

    abstract Topology ndv4();

    abstract Topology ncv4();

    /** OCI's hand-flattened A100 shapes. */
    abstract List<Topology> ociFlattened();

    private static Set<PciAddress> best(Topology t, String gpu) {
        return t.rankNics(gpu).stream()
                .filter(r -> r.tieGroup() == 0)
                .map(Ranked::address)
                .collect(Collectors.toSet());
    }

    private static Set<PciAddress> set(String... bdfs) {
        return Shapes.set(bdfs);
    }

    @Test
    void p4dEachGpuPairOwnsTheEfaBehindItsSwitch() {
        Topology t = p4d();
        Map<String, String> expected = Map.of("10", "10", "20", "20", "90", "90", "a0", "a0");
        expected.forEach((gpuBus, efaBus) -> {
            for (String fn : List.of("1c", "1d")) {
                String gpu = "0000:" + gpuBus + ":" + fn + ".0";
                assertEquals(set("0000:" + efaBus + ":1b.0"), best(t, gpu), gpu);
                assertEquals(Level.PIX, t.rankNics(gpu).get(0).level(), gpu);
            }
        });
        assertEquals(0, t.device("0000:20:1b.0").orElseThrow().numaNode());
        assertEquals(1, t.device("0000:a0:1b.0").orElseThrow().numaNode());
    }

    @Test
    void p4dEfaClass0200IsAnRdmaNicAndSyntheticSwitchesAreMarked() {
        Topology t = p4d();
        assertEquals(4, t.nics().size());
        assertTrue(t.nics().stream()
                .allMatch(n -> n.vendor() == 0x1d0f && n.deviceId() == 0xefa0 && n.classCode() == 0x020000));
        assertEquals(8, t.devices(DeviceKind.GPU).size());
        PciBridge sw = t.device("0000:10:1b.0").orElseThrow().path().get(0);
        assertEquals(bdf("ffff:ff:01.0"), sw.address());
        assertTrue(sw.synthetic());
    }

    @Test
    void p5FileAloneGroupsThirtyTwoEndpointsUnderEightSwitchesSplitAcrossNuma() {
        Topology t = p5();
        Map<PciAddress, List<PciDevice>> bySwitch = t.devices().stream()
                .collect(Collectors.groupingBy(d -> d.path().get(0).address()));
        assertEquals(8, bySwitch.size());
        bySwitch.values().forEach(v -> assertEquals(4, v.size()));
        assertEquals(
                set("0000:4f:00.0", "0000:50:00.0", "0000:51:00.0", "0000:52:00.0"),
                bySwitch.get(bdf("0000:45:00.0")).stream()
                        .map(PciDevice::address)
                        .collect(Collectors.toSet()));
        assertEquals(
                set("0000:c6:00.0", "0000:c7:00.0", "0000:c8:00.0", "0000:c9:00.0"),
                bySwitch.get(bdf("0000:bc:00.0")).stream()
                        .map(PciDevice::address)
                        .collect(Collectors.toSet()));
        for (String sw : List.of("45", "56", "67", "78")) {
            assertTrue(bySwitch.get(bdf("0000:" + sw + ":00.0")).stream().allMatch(d -> d.numaNode() == 0), sw);
        }
        for (String sw : List.of("89", "9a", "ab", "bc")) {
            assertTrue(bySwitch.get(bdf("0000:" + sw + ":00.0")).stream().allMatch(d -> d.numaNode() == 1), sw);
        }
        // the file names no classes: it only becomes NICs over a live scan (see VendorFileOverrideTest)
        assertTrue(t.nics().isEmpty());
    }

    @Test
    void ndv2GpusOneToFourReachTheNicAtNodeFiveToEightAtSys() {
        Topology t = ndv2();
        for (int i = 1; i <= 8; i++) {
            String gpu = String.format("%04x:00:00.0", i);
            List<Ranked<PciDevice>> r = t.rankNics(gpu);
            assertEquals(1, r.size());
            assertEquals(bdf("0101:00:00.0"), r.get(0).address());
            assertEquals(i <= 4 ? Level.NODE : Level.SYS, r.get(0).level(), gpu);
        }
    }

    @Test
    void ndv4TwoGpusAndTwoNicsPerSyntheticSwitchTieWithinTheGroup() {
        Topology t = ndv4();
        Map<Set<PciAddress>, Set<PciAddress>> groups = Map.of(
                set("0003:00:00.0", "0004:00:00.0"), set("0103:00:00.0", "0104:00:00.0"),
                set("0001:00:00.0", "0002:00:00.0"), set("0101:00:00.0", "0102:00:00.0"),
                set("000d:00:00.0", "000e:00:00.0"), set("0107:00:00.0", "0108:00:00.0"),
                set("000b:00:00.0", "000c:00:00.0"), set("0105:00:00.0", "0106:00:00.0"));
        groups.forEach((gpus, nics) -> gpus.forEach(g -> {
            assertEquals(nics, best(t, g.toString()), g.toString());
            List<Ranked<PciDevice>> r = t.rankNics(g.toString());
            assertEquals(r.get(0).level(), r.get(1).level());
            assertEquals(r.get(0).hops(), r.get(1).hops());
            assertEquals(r.get(0).tieGroup(), r.get(1).tieGroup());
            assertEquals(1, r.get(2).tieGroup());
        }));
        assertEquals(4, t.numaNodes().size());
    }

    @Test
    void ncv4HasNoRdmaNicAndSaysSoInsteadOfInventingOne() {
        Topology t = ncv4();
        assertTrue(t.nics().isEmpty());
        assertEquals(4, t.affinity().size());
        assertTrue(t.affinity().stream().allMatch(a -> a.nics().isEmpty()));
        TopologyException e = assertThrows(TopologyException.class, t::requireNics);
        assertTrue(e.getMessage().contains("no RDMA NIC"), e.getMessage());
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("eth0")),
                t.warnings().toString());
    }

    @Test
    void ociFlattenedShapesTieTwoNicsWithinEachNumaGroup() {
        for (Topology t : ociFlattened()) {
            String f = t.source();
            assertEquals(8, t.devices(DeviceKind.GPU).size(), f);
            assertEquals(8, t.nics().size(), f);
            for (PciDevice gpu : t.devices(DeviceKind.GPU)) {
                Set<PciAddress> sameGroup = t.nics().stream()
                        .filter(n -> n.path()
                                .get(0)
                                .address()
                                .equals(gpu.path().get(0).address()))
                        .map(PciDevice::address)
                        .collect(Collectors.toSet());
                assertEquals(2, sameGroup.size(), f + " " + gpu.address());
                assertEquals(sameGroup, best(t, gpu.address().toString()), f + " " + gpu.address());
                assertTrue(t.nics().stream()
                        .filter(n -> sameGroup.contains(n.address()))
                        .allMatch(n -> n.numaNode() == gpu.numaNode()));
            }
        }
    }
}
