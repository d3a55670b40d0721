package io.rdma4j.topology;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PciDomain32BitsChecks} on a tree written here with the capture's facts: one node with CPUs 0-1; on pci0000:00
 * a Cirrus VGA (1013:00b8) and a virtio NIC without RDMA (1af4:1000), on pci10000:00 a virtio disk at 10000:00:04.0
 * (class 0x0100), all with {@code numa_node=-1} and no bridge above them.
 */
class PciDomain32BitsShapeTest extends PciDomain32BitsChecks {
    @TempDir
    static Path tmp;
    private static Path root;

    @Override
    Path root() {
        synchronized (PciDomain32BitsShapeTest.class) {
            if (root == null) {
                Path dir = tmp.resolve("pcidomain32bits");
                FakeSysfs fs = new FakeSysfs(dir).node(0, "0-1", "10");
                fs.pci("pci0000:00", List.of(), "0000:00:02.0", 0x030000, 0x1013, 0x00b8, -1, "0-1", null, 0);
                fs.pci("pci0000:00", List.of(), "0000:00:03.0", 0x020000, 0x1af4, 0x1000, -1, "0-1", null, 0);
                fs.pci("pci10000:00", List.of(), "10000:00:04.0", 0x010000, 0x1af4, 0x1001, -1, "0-1", null, 0);
                root = dir;
            }
            return root;
        }
    }
}
