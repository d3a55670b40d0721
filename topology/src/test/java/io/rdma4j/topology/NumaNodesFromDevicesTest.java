package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A captured tree can lack {@code sys/devices/system/node} (the gather tool skipped it, or a trimmed capture) while its
 * devices still name their nodes: every node a device's {@code numa_node} names is listed.
 */
class NumaNodesFromDevicesTest {
    @TempDir
    Path tmp;

    /**
     * Two sockets, no node folders: a GPU and a NIC name node 1, a NIC names node 0, an NVMe says -1 with node 1's
     * CPUs.
     */
    private Topology twoSocketsWithoutNodeFolders() {
        FakeSysfs fs = new FakeSysfs(tmp).onlineCpus("0-15");
        fs.pci(
                "pci0000:00",
                List.of("0000:00:01.0"),
                "0000:01:00.0",
                0x020700,
                0x15b3,
                0x101b,
                0,
                "0-7",
                "16.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:80",
                List.of("0000:80:01.0"),
                "0000:81:00.0",
                0x030200,
                0x10de,
                0x20b5,
                1,
                "8-15",
                "16.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:80",
                List.of("0000:80:02.0"),
                "0000:82:00.0",
                0x020700,
                0x15b3,
                0x101b,
                1,
                "8-15",
                "16.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:80",
                List.of("0000:80:03.0"),
                "0000:83:00.0",
                0x010802,
                0x144d,
                0xa80a,
                -1,
                "8-15",
                "8.0 GT/s PCIe",
                4);
        return Topology.builder().fsroot(tmp).nicFilter("").build();
    }

    @Test
    void everyNodeThatADeviceNamesIsListedWithTheCpusItsDevicesReport() {
        Topology t = twoSocketsWithoutNodeFolders();
        assertEquals(List.of(0, 1), t.numaNodes().stream().map(NumaNode::id).toList());
        assertEquals(
                List.of(8, 9, 10, 11, 12, 13, 14, 15),
                t.numaNode(1).orElseThrow().cpus());
        assertEquals(
                List.of(0, 1, 2, 3, 4, 5, 6, 7),
                t.numaNode(0).orElseThrow().cpus(),
                "node 1's CPUs are no longer claimed by the single node a kernel without NUMA would have");
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("NUMA node 1") && w.contains("numa_node")),
                t.warnings().toString());
    }

    @Test
    void nodesNamedByDevicesRankAndPlaceAsIfTheirFoldersWereThere() {
        Topology t = twoSocketsWithoutNodeFolders();
        assertEquals(1, t.cpuHome(Location.parse("0000:81:00.0")));
        List<Ranked<PciDevice>> fromNode1 = t.rankNics("numa:1");
        assertEquals(PciAddress.parse("0000:82:00.0"), fromNode1.get(0).address());
        assertEquals(Level.NODE, fromNode1.get(0).level());
        PciDevice nvme = t.device("0000:83:00.0").orElseThrow();
        assertEquals(1, nvme.numaNode(), "numa_node=-1 with node 1's CPUs: not the single-node guess");
        assertEquals(NumaSource.LOCAL_CPULIST, nvme.numaSource());
    }

    @Test
    void aKernelWithoutNumaStaysOneNodeWithEveryCpu() {
        FakeSysfs fs = new FakeSysfs(tmp).onlineCpus("0-3");
        fs.pci("pci0000:00", List.of(), "0000:00:03.0", 0x020000, 0x1af4, 0x1000, -1, "0-3", null, 0);
        Topology t = Topology.builder().fsroot(tmp).nicFilter("").build();
        assertEquals(1, t.numaNodes().size());
        assertEquals(List.of(0, 1, 2, 3), t.numaNode(0).orElseThrow().cpus());
        assertEquals(
                NumaSource.SINGLE_NODE, t.device("0000:00:03.0").orElseThrow().numaSource());
    }
}
