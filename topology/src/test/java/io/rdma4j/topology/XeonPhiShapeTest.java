package io.rdma4j.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link XeonPhiChecks} on a tree written here with the capture's facts: CPUs 0-7 on node 0 and 8-15 on node 1
 * (distance 21); on pci0000:00 an Intel I350 (no RDMA) at 02:00.0/.3, an NVMe at 00:02.0 with {@code numa_node=-1} and
 * {@code local_cpulist=0-3} registered only under {@code misc/}, and the ASPEED BMC 05:00.0 behind its own bridge
 * 04:00.0; on pci0000:80 the ConnectX-3 82:00.0 ({@code mlx4_0}, FDR InfiniBand, ib0) and the Xeon Phi 83:00.0 on
 * their own root ports; {@code scif0} links to a device the tree lacks.
 */
class XeonPhiShapeTest extends XeonPhiChecks {
    @TempDir
    static Path tmp;
    private static Path root;

    @Override
    Path root() {
        synchronized (XeonPhiShapeTest.class) {
            if (root == null) {
                root = write(tmp.resolve("xeon-phi"));
            }
            return root;
        }
    }

    private static Path write(Path dir) {
        FakeSysfs fs = new FakeSysfs(dir).node(0, "0-7", "10 21").node(1, "8-15", "21 10")
                .proc("Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz", 2, 8, 65_895_448);
        List<String> rp = List.of("0000:00:01.1");
        fs.pci("pci0000:00", rp, "0000:02:00.0", 0x020000, 0x8086, 0x1521, 0, "0-7", "5 GT/s", 4);
        fs.pci("pci0000:00", rp, "0000:02:00.3", 0x020000, 0x8086, 0x1521, 0, "0-7", "5 GT/s", 4);
        fs.pci("pci0000:00", List.of(), "0000:00:02.0", 0x010802, 0x8086, 0x0953, -1, "0-3", "8 GT/s", 4);
        fs.pci("pci0000:00", List.of(), "0000:00:1f.2", 0x010601, 0x8086, 0x1d02, 0, "0-7", null, 0);
        fs.bridge("pci0000:00", List.of(), "0000:00:1c.0", 0x8086, 0x1d10, 0, "0-7");
        fs.bridge("pci0000:00", List.of("0000:00:1c.0"), "0000:04:00.0", 0x1a03, 0x1150, 0, "0-7");
        fs.pci("pci0000:00", List.of("0000:00:1c.0", "0000:04:00.0"), "0000:05:00.0", 0x030000, 0x1a03, 0x2000,
                0, "0-7", null, 0);
        fs.pci("pci0000:80", List.of("0000:80:02.2"), "0000:82:00.0", 0x028000, 0x15b3, 0x1003, 1, "8-15", "8 GT/s", 8);
        fs.verbs("mlx4_0", "0000:82:00.0", "56 Gb/sec (4X FDR)", "InfiniBand", "ib0");
        fs.pci("pci0000:80", List.of("0000:80:03.0"), "0000:83:00.0", 0x0b4000, 0x8086, 0x225c,
                1, "8-15", "5 GT/s", 16);
        fs.danglingIb("scif0", "scif_dma_0");
        try {
            // an old kernel registers the controller as misc/nvme0, with no /sys/class/nvme entry
            Files.createDirectories(fs.deviceDir("0000:00:02.0").resolve("misc/nvme0"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir;
    }
}
