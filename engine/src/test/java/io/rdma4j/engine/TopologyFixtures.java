package io.rdma4j.engine;

import io.rdma4j.ffi.TestPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The engine tests' machines: topology files and sysfs trees written here by hand (always present), and the
 * real-machine captures in {@code ../shared/topology} that they reproduce (only for tests marked
 * {@link io.rdma4j.ffi.Extended}). Ground truth for both is {@code ../shared/topology/README.md}.
 */
public final class TopologyFixtures {
    /** The hand-written NCCL topology files under {@code src/test/resources/topology}. */
    public static final String P4D = "p4d-like.xml";
    public static final String NDV4 = "ndv4-like.xml";
    public static final String NCV4 = "ncv4-like.xml";

    /** The captures the files above reproduce, relative to {@code ../shared/topology}. */
    public static final String P4D_CAPTURE = "nccl/aws-ofi-nccl/p4d-24xl-topo.xml";
    public static final String NDV4_CAPTURE = "azure/ndv4-topo.xml";
    public static final String NCV4_CAPTURE = "azure/ncv4-topo.xml";
    public static final String XEON_PHI_CAPTURE = "hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2";

    private TopologyFixtures() {
    }

    /** A hand-written topology file from the test resources. */
    public static Path file(String name) {
        URL url = TopologyFixtures.class.getResource("/topology/" + name);
        if (url == null) {
            throw new IllegalArgumentException("no test resource topology/" + name);
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A capture in {@code ../shared/topology}; call it only from an extended test's method. */
    public static Path capture(String rel) {
        return TestPaths.shared().resolve("topology").resolve(rel);
    }

    /**
     * The 2-socket Xeon with a Xeon Phi that {@link #XEON_PHI_CAPTURE} was taken on, as a sysfs tree holding the
     * facts the README names and the tests rank on:
     * <ul>
     *   <li>NUMA 0 = CPUs 0-7, NUMA 1 = CPUs 8-15;</li>
     *   <li>the Xeon Phi (8086:225c, class 0x0b40) at 83:00.0 behind root port 80:03.0, and the ConnectX-3
     *       (15b3:1003, class 0x0280, verbs device {@code mlx4_0}, one active 56 Gb/s InfiniBand port, interface
     *       {@code ib0}) at 82:00.0 behind root port 80:02.2: both on NUMA 1 under host bridge pci0000:80, so PHB;</li>
     *   <li>an NVMe drive (8086:0953) at 00:02.0 with {@code numa_node=-1} but {@code local_cpulist=0-3}, registered
     *       as {@code misc/nvme0} (the capture has no {@code /sys/class/nvme}): NUMA 0;</li>
     *   <li>the ASPEED BMC video (1a03:2000, class 0x0300) at 05:00.0 behind 00:1c.0 and 04:00.0: not a GPU;</li>
     *   <li>an Intel I350 (8086:1521, class 0x0200) {@code eth0} at 02:00.0 without a verbs device: not an RDMA
     *       NIC;</li>
     *   <li>{@code /sys/class/infiniband/scif0} pointing to {@code devices/scif_dma_0}, which the tree lacks.</li>
     * </ul>
     *
     * @param dir an empty folder
     * @return the filesystem root to scan
     */
    public static Path xeonPhiBox(Path dir) {
        String nic = "pci0000:80/0000:80:02.2/0000:82:00.0";
        return new SysfsTree(dir)
                .node(0, "0-7", "10 21")
                .node(1, "8-15", "21 10")
                .pci("pci0000:00/0000:00:01.1", 0x060400, 0x8086, 0x3c03, 0, "0-7")
                .pci("pci0000:00/0000:00:01.1/0000:02:00.0", 0x020000, 0x8086, 0x1521, 0, "0-7")
                .netdev("pci0000:00/0000:00:01.1/0000:02:00.0", "eth0")
                .pci("pci0000:00/0000:00:02.0", 0x010802, 0x8086, 0x0953, -1, "0-3")
                .child("pci0000:00/0000:00:02.0", "misc/nvme0")
                .pci("pci0000:00/0000:00:1c.0", 0x060400, 0x8086, 0x1d10, 0, "0-7")
                .pci("pci0000:00/0000:00:1c.0/0000:04:00.0", 0x060400, 0x1a03, 0x1150, 0, "0-7")
                .pci("pci0000:00/0000:00:1c.0/0000:04:00.0/0000:05:00.0", 0x030000, 0x1a03, 0x2000, 0, "0-7")
                .pci("pci0000:80/0000:80:02.2", 0x060400, 0x8086, 0x3c06, 1, "8-15")
                .pci(nic, 0x028000, 0x15b3, 0x1003, 1, "8-15")
                .verbs("mlx4_0", nic, "4: ACTIVE", "56 Gb/sec (4X FDR)", "InfiniBand", "ib0")
                .pci("pci0000:80/0000:80:03.0", 0x060400, 0x8086, 0x3c08, 1, "8-15")
                .pci("pci0000:80/0000:80:03.0/0000:83:00.0", 0x0b4000, 0x8086, 0x225c, 1, "8-15")
                .danglingVerbs("scif0", "../../devices/scif_dma_0/infiniband/scif0")
                .root();
    }

    /**
     * Unpacks a sysfs capture tarball into {@code dir}, leaving out the per-memory-block and per-cache folders that
     * the scanner never reads, and returns the folder holding {@code sys/} (its name can differ from the tarball's).
     */
    public static Path unpack(Path tarball, Path dir) {
        try {
            Process p = new ProcessBuilder("tar", "-xjf", tarball.toString(), "-C", dir.toString(), "--no-same-owner",
                    "--no-same-permissions", "--wildcards", "--exclude=*/sys/devices/system/node/node*/memory[0-9]*",
                    "--exclude=*/sys/devices/system/memory", "--exclude=*/sys/devices/system/cpu/cpu[0-9]*/cache")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException("tar -xjf " + tarball + " failed: " + out);
            }
            try (Stream<Path> s = Files.list(dir)) {
                return s.filter(d -> Files.isDirectory(d.resolve("sys"))).findFirst()
                        .orElseThrow(() -> new IllegalStateException("no sys/ in " + tarball + ": " + out));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while unpacking " + tarball, e);
        }
    }
}
