package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shapes no capture in ../shared has, in the kernel's sysfs layout: a GPU server with a PCIe switch, dual-port NICs,
 * NVMe over fabrics, native multipath, a memory-only NUMA node.
 */
class SysfsShapesTest {
    @TempDir
    static Path shared;

    static Topology topo;

    @TempDir
    Path own;

    /*
     * pci0000:00 (NUMA 0)                               pci0000:80 (NUMA 1)
     *   00:01.0 root port                                 80:01.0 root port
     *     01:00.0 switch upstream port                      81:00.0 mlx5_2, dual port, Gen3 x16
     *       02:00.0 -> 03:00.0 GPU
     *       02:01.0 -> 04:00.0 mlx5_0, Gen4 x16
     *       02:02.0 -> 05:00.0 mlx5_1, Gen4 x8
     *       02:03.0 -> 06:00.0 NVMe nvme0
     *   00:02.0 root port -> 07:00.0 GPU
     *   00:03.0 root port -> 08:00.0 mlx5_3
     * node 2: memory only (GPU memory on POWER9, CXL); nvme1 (tcp, host_iface=ens81f0) and nvme2 (rdma) share
     * subsystem nvme-subsys1 whose namespace nvme1n1 has one path through each.
     */
    @BeforeAll
    static void scanShared() {
        machine(shared);
        topo = Topology.builder().fsroot(shared).nicFilter("").build();
    }

    static void machine(Path tmp) {
        FakeSysfs fs = new FakeSysfs(tmp)
                .node(0, "0-7", "10 20 40")
                .node(1, "8-15", "20 10 40")
                .node(2, "", "40 30 10");
        List<String> sw = List.of("0000:00:01.0", "0000:01:00.0");
        fs.pci(
                "pci0000:00",
                append(sw, "0000:02:00.0"),
                "0000:03:00.0",
                0x030200,
                0x10de,
                0x2330,
                0,
                "0-7",
                "32.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:00",
                append(sw, "0000:02:01.0"),
                "0000:04:00.0",
                0x020700,
                0x15b3,
                0x1021,
                0,
                "0-7",
                "16.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:00",
                append(sw, "0000:02:02.0"),
                "0000:05:00.0",
                0x020700,
                0x15b3,
                0x1021,
                0,
                "0-7",
                "16.0 GT/s PCIe",
                8);
        fs.pci(
                "pci0000:00",
                append(sw, "0000:02:03.0"),
                "0000:06:00.0",
                0x010802,
                0x144d,
                0xa80a,
                0,
                "0-7",
                "16.0 GT/s PCIe",
                4);
        fs.pci(
                "pci0000:00",
                List.of("0000:00:02.0"),
                "0000:07:00.0",
                0x030200,
                0x10de,
                0x2330,
                0,
                "0-7",
                "32.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:00",
                List.of("0000:00:03.0"),
                "0000:08:00.0",
                0x020000,
                0x15b3,
                0x101d,
                0,
                "0-7",
                "16.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:80",
                List.of("0000:80:01.0"),
                "0000:81:00.0",
                0x020000,
                0x15b3,
                0x1017,
                1,
                "8-15",
                "8.0 GT/s PCIe",
                16);
        fs.ib("mlx5_0", "0000:04:00.0", "400 Gb/sec (4X NDR)", "ib0");
        fs.ib("mlx5_1", "0000:05:00.0", "200 Gb/sec (4X HDR)", "ib1");
        fs.ib("mlx5_3", "0000:08:00.0", "200 Gb/sec (4X HDR)", "ens3");
        fs.ib("mlx5_2", "0000:81:00.0", "100 Gb/sec (4X EDR)", "ens81f0", "ens81f1");
        fs.nvmePcie("nvme0", "0000:06:00.0");
        fs.nvmeFabrics(
                "nvme1", "tcp", "traddr=192.0.2.10,trsvcid=4420,host_iface=ens81f0", "nqn.2024-01.io.rdma4j:remote", 1);
        fs.nvmeFabrics(
                "nvme2",
                "rdma",
                "traddr=192.0.2.11,trsvcid=4420,host_traddr=192.0.2.1",
                "nqn.2024-01.io.rdma4j:remote",
                -1);
        fs.multipathNamespace(
                "nvme-subsys1", "nvme1n1", List.of("nvme1c1n1", "nvme1c2n1"), List.of("optimized", "non-optimized"));
    }

    private static List<String> append(List<String> l, String s) {
        List<String> out = new java.util.ArrayList<>(l);
        out.add(s);
        return out;
    }

    @Test
    void gpuAndNicBelowOneSwitchArePxbAndTheSwitchBeatsTheHostBridge() {
        List<Ranked<PciDevice>> r = topo.rankNics("0000:03:00.0");
        assertEquals(bdf("0000:04:00.0"), r.get(0).address());
        assertEquals(Level.PXB, r.get(0).level());
        assertEquals(Level.PHB, topo.level(bdf("0000:03:00.0"), bdf("0000:08:00.0")));
        assertEquals(Level.SYS, topo.level(bdf("0000:03:00.0"), bdf("0000:81:00.0")));
    }

    @Test
    void equalHopsAreBrokenByLinkBandwidth() {
        List<Ranked<PciDevice>> r = topo.rankNics("0000:03:00.0");
        assertEquals(r.get(0).hops(), r.get(1).hops());
        assertTrue(r.get(0).bandwidthGbps() > r.get(1).bandwidthGbps());
        assertEquals(bdf("0000:05:00.0"), r.get(1).address());
        assertEquals(0, r.get(0).tieGroup());
        assertEquals(1, r.get(1).tieGroup());
    }

    @Test
    void sameLevelIsBrokenByBridgeHops() {
        // from numa:0 all four NUMA-0 NICs are NODE: those nearer the root come first
        List<Ranked<PciDevice>> r = topo.rankNics("numa:0");
        assertEquals(bdf("0000:08:00.0"), r.get(0).address());
        assertEquals(Level.NODE, r.get(0).level());
        assertTrue(r.get(0).hops() < r.get(1).hops());
        assertEquals(Level.SYS, r.get(r.size() - 1).level());
    }

    @Test
    void gpuOnItsOwnRootPortReachesNicsAtPhb() {
        List<Ranked<PciDevice>> r = topo.rankNics("0000:07:00.0");
        assertEquals(bdf("0000:08:00.0"), r.get(0).address());
        assertEquals(Level.PHB, r.get(0).level());
        assertEquals(Level.PHB, r.get(1).level());
        assertTrue(r.get(0).hops() < r.get(1).hops());
    }

    @Test
    void dualPortNicIsOneFunctionWithTwoLanes() {
        PciDevice nic = topo.device("0000:81:00.0").orElseThrow();
        assertEquals(1, nic.rdmaDevices().size());
        assertEquals(2, nic.ports().size());
        assertEquals(List.of("ens81f0"), nic.ports().get(0).netdevs());
        assertEquals(List.of("ens81f1"), nic.ports().get(1).netdevs());
        assertEquals(100.0, nic.lineRateGbps());
        assertEquals(List.of("mlx5_2"), nic.names());
        assertEquals(List.of("ens81f0", "ens81f1"), nic.netdevs());
    }

    @Test
    void pcieNvmeRanksPxbBelowTheGpusSwitch() {
        Ranked<NvmeController> best =
                topo.rankNvme(Location.parse("0000:03:00.0")).get(0);
        assertEquals("nvme0", best.target().name());
        assertEquals(Level.PXB, best.level());
        assertEquals(bdf("0000:06:00.0"), best.address());
    }

    @Test
    void fabricsControllerIsLocatedThroughTheNicThatReachesIt() {
        NvmeController tcp = topo.nvmeControllers().stream()
                .filter(c -> c.name().equals("nvme1"))
                .findFirst()
                .orElseThrow();
        assertTrue(tcp.fabrics());
        assertEquals("tcp", tcp.transport());
        assertEquals("nqn.2024-01.io.rdma4j:remote", tcp.subsysnqn());
        assertEquals("192.0.2.10", tcp.addressField("traddr").orElseThrow());
        assertEquals(bdf("0000:81:00.0"), tcp.via().orElseThrow());
        Ranked<NvmeController> fromNode1 = topo.rankNvme(Location.numa(1)).get(0);
        assertEquals("nvme1", fromNode1.target().name());
        assertEquals(bdf("0000:81:00.0"), fromNode1.address());
        assertEquals(Level.NODE, fromNode1.level());
    }

    @Test
    void fabricsControllerWithUnknownNicRanksLastWithoutAnAddress() {
        NvmeController rdma = topo.nvmeControllers().stream()
                .filter(c -> c.name().equals("nvme2"))
                .findFirst()
                .orElseThrow();
        assertTrue(rdma.via().isEmpty(), "a captured tree has no interface addresses: host_traddr cannot be matched");
        List<Ranked<NvmeController>> r = topo.rankNvme(Location.numa(0));
        assertEquals("nvme2", r.get(r.size() - 1).target().name());
        assertEquals(null, r.get(r.size() - 1).address());
    }

    @Test
    void multipathNamespaceHasOnePathPerControllerWithAnaStateAndNuma() {
        NvmeNamespace ns = topo.nvmeNamespaces().stream()
                .filter(n -> n.name().equals("nvme1n1"))
                .findFirst()
                .orElseThrow();
        assertEquals("nvme-subsys1", ns.subsystem());
        assertEquals(2, ns.paths().size());
        NvmeNamespace.Path p1 = ns.paths().get(0);
        assertEquals("nvme1c1n1", p1.name());
        assertEquals("nvme1", p1.controller());
        assertEquals("optimized", p1.anaState());
        assertEquals(1, p1.numaNode());
        assertEquals("non-optimized", ns.paths().get(1).anaState());
        assertEquals("nvme2", ns.paths().get(1).controller());
    }

    @Test
    void memoryOnlyNumaNodeIsNeverACpuHome() {
        NumaNode n2 = topo.numaNode(2).orElseThrow();
        assertFalse(n2.hasCpus());
        assertEquals(1, topo.cpuHome(Location.numa(2)), "nearest node with CPUs by distance (30 < 40)");
        assertEquals(0, topo.cpuHome(Location.parse("0000:03:00.0")));
    }

    @Test
    void affinityHasOneEntryPerGpuWithNicsAndNvmeBestFirst() {
        List<Affinity> a = topo.affinity();
        assertEquals(
                List.of(bdf("0000:03:00.0"), bdf("0000:07:00.0")),
                a.stream().map(x -> x.device().address()).toList());
        assertEquals(4, a.get(0).nics().size());
        assertEquals(
                List.of(bdf("0000:04:00.0")),
                a.get(0).bestNics().stream().map(Ranked::address).toList());
        for (Affinity x : a) {
            for (int i = 1; i < x.nics().size(); i++) {
                assertTrue(x.nics().get(i - 1).level().compareTo(x.nics().get(i).level()) <= 0);
            }
        }
    }

    @Test
    void bridgeMissingFromTheBusListIsStillOnThePathWithItsAttributes() throws Exception {
        machine(own);
        java.nio.file.Files.delete(own.resolve("sys/bus/pci/devices/0000:01:00.0"));
        Topology t = Topology.builder().fsroot(own).nicFilter("").build();
        PciDevice gpu = t.device("0000:03:00.0").orElseThrow();
        assertEquals(
                List.of(bdf("0000:00:01.0"), bdf("0000:01:00.0"), bdf("0000:02:00.0")),
                gpu.path().stream().map(PciBridge::address).toList());
        assertEquals(0x8086, gpu.path().get(1).vendor());
        assertTrue(t.bridges().stream().noneMatch(b -> b.address().equals(bdf("0000:01:00.0"))));
        assertEquals(Level.PXB, t.rankNics("0000:03:00.0").get(0).level());
    }
}
