package io.rdma4j.topology;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PciLocalityChecks} on a tree written here with the capture's facts: 40 CPUs interleaved over 4 nodes (node n
 * has n, n+4, ...; distance 20 between nodes), every device reporting all 40 CPUs local; the QLogic HCA 43:00.0
 * ({@code qib0}, QDR InfiniBand, ib0) says {@code numa_node=2}, the others -1: Broadcom Ethernet without RDMA and the
 * Matrox BMC video.
 */
class PciLocalityShapeTest extends PciLocalityChecks {
    @TempDir
    static Path tmp;

    private static Path root;

    @Override
    Path root() {
        synchronized (PciLocalityShapeTest.class) {
            if (root == null) {
                root = write(tmp.resolve("pcilocality"));
            }
            return root;
        }
    }

    private static Path write(Path dir) {
        FakeSysfs fs = new FakeSysfs(dir);
        for (int n = 0; n < 4; n++) {
            int node = n;
            String cpus = IntStream.range(0, 10)
                    .mapToObj(i -> Integer.toString(node + 4 * i))
                    .collect(Collectors.joining(","));
            String distances =
                    IntStream.range(0, 4).mapToObj(m -> m == node ? "10" : "20").collect(Collectors.joining(" "));
            fs.node(n, cpus, distances);
        }
        String all = "0-39";
        fs.pci("pci0000:00", List.of("0000:00:05.0"), "0000:02:00.0", 0x020000, 0x14e4, 0x1639, -1, all, "5 GT/s", 4);
        fs.pci("pci0000:00", List.of("0000:00:05.0"), "0000:02:00.1", 0x020000, 0x14e4, 0x1639, -1, all, "5 GT/s", 4);
        fs.pci("pci0000:00", List.of("0000:00:1e.0"), "0000:09:03.0", 0x030000, 0x102b, 0x0532, -1, all, null, 0);
        fs.pci("pci0000:40", List.of("0000:40:03.0"), "0000:43:00.0", 0x0c0600, 0x1077, 0x7322, 2, all, "5 GT/s", 8);
        fs.verbs("qib0", "0000:43:00.0", "40 Gb/sec (4X QDR)", "InfiniBand", "ib0");
        return dir;
    }
}
