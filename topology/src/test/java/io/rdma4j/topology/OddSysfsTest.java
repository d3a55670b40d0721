package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Captured trees carry odd files: the scan neither hangs, throws, nor leaves the tree. */
class OddSysfsTest {
    @TempDir
    Path tmp;

    @Test
    void fifosLoopsDanglingLinksAndGarbageAreSkippedNotFatal() throws Exception {
        Path root = tmp.resolve("root");
        FakeSysfs fs = new FakeSysfs(root).node(0, "0-3", "10").node(1, "4-7", "20 10");
        fs.pci(
                "pci0000:00",
                List.of("0000:00:01.0"),
                "0000:01:00.0",
                0x020700,
                0x15b3,
                0x1021,
                0,
                "0-3",
                "16.0 GT/s PCIe",
                16);
        fs.pci("pci0000:00", List.of(), "0000:00:02.0", 0x030200, 0x10de, 0x2330, -1, "0-7", null, 0);
        Path dev = fs.deviceDir("0000:00:02.0");
        // a FIFO where an attribute should be: reading it would block forever
        Files.delete(dev.resolve("current_link_speed").getParent().resolve("numa_node"));
        Process mkfifo = new ProcessBuilder("mkfifo", dev.resolve("numa_node").toString())
                .inheritIO()
                .start();
        assertEquals(0, mkfifo.waitFor(), "mkfifo");
        Path bus = root.resolve("sys/bus/pci/devices");
        Files.createSymbolicLink(bus.resolve("0000:00:03.0"), Path.of("0000:00:03.0")); // a loop
        Files.createSymbolicLink(bus.resolve("0000:00:04.0"), Path.of("../../../devices/pci0000:00/gone")); // dangling
        Files.createSymbolicLink(
                bus.resolve("0000:00:05.0"), Path.of("../../../../../../../../etc")); // leaves the tree
        Files.writeString(bus.resolve("not-a-device"), "x");
        Files.writeString(fs.deviceDir("0000:01:00.0").resolve("class"), "0xzz\n");
        Files.createDirectories(root.resolve("sys/class/infiniband"));
        Files.createSymbolicLink(
                root.resolve("sys/class/infiniband/mlx5_9"), Path.of("../../devices/nowhere/infiniband/mlx5_9"));

        Topology t = assertTimeoutPreemptively(
                Duration.ofSeconds(60),
                () -> Topology.builder().fsroot(root).nicFilter("").build());
        assertEquals(
                List.of(Shapes.bdf("0000:00:02.0"), Shapes.bdf("0000:01:00.0")),
                t.devices().stream().map(PciDevice::address).toList());
        PciDevice gpu = t.device("0000:00:02.0").orElseThrow();
        assertEquals(DeviceKind.GPU, gpu.kind());
        assertEquals(-1, gpu.numaNode(), "a FIFO is not read; local_cpulist 0-7 spans both nodes");
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("0000:00:02.0") && w.contains("no NUMA locality")),
                t.warnings().toString());
        assertEquals(-1, t.device("0000:01:00.0").orElseThrow().classCode(), "garbage class reads as unknown");
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("0000:00:04.0")),
                t.warnings().toString());
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("0000:00:05.0")),
                t.warnings().toString());
        assertTrue(t.rdmaDevices().stream()
                .anyMatch(r -> r.name().equals("mlx5_9") && r.pci().isEmpty()));
        assertEquals(
                DeviceKind.OTHER,
                t.device("0000:01:00.0").orElseThrow().kind(),
                "unknown class, no verbs device: not a NIC");
    }
}
