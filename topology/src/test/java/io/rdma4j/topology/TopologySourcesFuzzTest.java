package io.rdma4j.topology;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Fuzz targets for the machine descriptions the topology module reads: NCCL and hwloc XML files, and sysfs trees. Both
 * are untrusted (a file a user passes, a tree a container or a kernel bug may present): a reader may refuse one only
 * with {@link TopologyException}, and every query on what it accepted must answer. {@code ./rdma4j test} replays the
 * committed inputs under {@code src/test/resources/io/rdma4j/topology/TopologySourcesFuzzTestInputs/}.
 */
class TopologySourcesFuzzTest {
    /** Attribute files of the base tree that a fuzzed input may rewrite, relative to its root. */
    private static final List<String> ATTRIBUTES = List.of(
            "sys/devices/system/node/node0/cpulist",
            "sys/devices/system/node/node0/distance",
            "sys/devices/system/node/node1/cpulist",
            "sys/devices/system/node/node1/distance",
            "sys/devices/system/node/node1/meminfo",
            "sys/devices/system/cpu/online",
            "proc/cpuinfo",
            "proc/meminfo",
            "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/class",
            "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/numa_node",
            "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/local_cpulist",
            "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/current_link_speed",
            "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/current_link_width",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/class",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/vendor",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/numa_node",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/infiniband/mlx5_0/ports/1/rate",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/infiniband/mlx5_0/ports/1/state",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/infiniband/mlx5_0/ports/1/link_layer",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0",
            "sys/devices/pci0000:00/0000:00:01.0/0000:02:00.0/net/ib0/dev_port",
            "sys/devices/pci0000:00/0000:00:01.0/class",
            "sys/devices/pci0000:00/0000:00:01.0/local_cpus");

    /** An NCCL topology or hwloc XML file, as {@code --nccl-xml} or RDMA4J_TOPO_FILE would name it. */
    @FuzzTest(maxDuration = "30s")
    void vendorXml(byte[] input) throws IOException {
        Path file = Files.createTempFile("rdma4j-fuzz-", ".xml");
        try {
            Files.write(file, input);
            query(Topology.fromNcclXml(file));
        } catch (TopologyException refused) {
            // the documented refusal
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * A sysfs tree: a GPU and an RDMA NIC behind one switch on a two-node machine, with some of its attribute files
     * rewritten by the input (any text, or removed).
     */
    @FuzzTest(maxDuration = "30s")
    void sysfsTree(FuzzedDataProvider data) throws IOException {
        Path root = Files.createTempDirectory("rdma4j-fuzz-sysfs-");
        try {
            FakeSysfs fs = new FakeSysfs(root)
                    .node(0, "0-3", "10 20")
                    .node(1, "4-7", "20 10")
                    .onlineCpus("0-7")
                    .proc("Fuzz CPU", 2, 4, 16_384_000)
                    .pci(
                            "pci0000:00",
                            List.of("0000:00:01.0"),
                            "0000:01:00.0",
                            0x030200,
                            0x10de,
                            0x2330,
                            0,
                            "0-3",
                            "32.0 GT/s PCIe",
                            16)
                    .pci(
                            "pci0000:00",
                            List.of("0000:00:01.0"),
                            "0000:02:00.0",
                            0x020700,
                            0x15b3,
                            0x101b,
                            0,
                            "0-3",
                            "32.0 GT/s PCIe",
                            16)
                    .verbs("mlx5_0", "0000:02:00.0", "400 Gb/sec (4X NDR)", "InfiniBand", "ib0");
            int edits = data.consumeInt(0, 8);
            for (int i = 0; i < edits && data.remainingBytes() > 0; i++) {
                Path file = fs.root().resolve(ATTRIBUTES.get(data.consumeInt(0, ATTRIBUTES.size() - 1)));
                if (data.consumeBoolean()) {
                    Files.deleteIfExists(file);
                } else {
                    Files.createDirectories(file.getParent());
                    Files.write(file, data.consumeString(96).getBytes(StandardCharsets.UTF_8));
                }
            }
            query(Topology.scan(root));
            SystemSummary.fromProc(root);
        } catch (TopologyException refused) {
            // the documented refusal
        } finally {
            delete(root);
        }
    }

    /** Every query a user makes of a topology it accepted. */
    private static void query(Topology t) {
        t.toString();
        t.warnings();
        t.affinity();
        t.numaNodes();
        t.rdmaDevices();
        for (PciDevice d : t.computeDevices()) {
            t.rankNics(Location.device(d.address()));
            t.rankNvme(Location.device(d.address()));
        }
        for (NumaNode n : t.numaNodes()) {
            t.rankNics(Location.numa(n.id()));
        }
        for (RdmaDevice r : t.rdmaDevices()) {
            t.nicAttributes(r.name());
        }
        TopologyJson.write(t, null);
    }

    private static void delete(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
