package io.rdma4j.perf;

import io.rdma4j.topology.Location;
import io.rdma4j.topology.Topology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scanning the largest sysfs capture in ../shared/topology (hwloc's 40intel64-2g2n4c+pcilocality: 4 NUMA nodes, 40
 * CPUs, 11,000 files), unpacked once per trial. Baseline: {@link #baselineRawAttributeReads}, the five reads per PCI
 * function (class, vendor, device, numa_node, local_cpulist) that any scanner must do, so the difference is what
 * resolving links, walking bridge chains, NUMA, verbs and NVMe discovery and classification add. {@link #rankAll} adds
 * ranking every NIC and NVMe drive for every NUMA node; {@link #parseVendorFile} reads the MI300X NCCL file.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class TopologyScanBench {
    private static final String CAPTURE = "hwloc/linux/40intel64-2g2n4c+pcilocality.tar.bz2";

    private Path tmp;
    private Path root;
    private Path vendorFile;

    /** ../shared/topology beside the project root, or $RDMA4J_SHARED/topology. */
    static Path fixtures() {
        String env = System.getenv("RDMA4J_SHARED");
        if (env != null) {
            return Path.of(env, "topology");
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.exists(dir.resolve("pom.xml")) && Files.isDirectory(dir.resolve("backends")))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException(
                    "run from inside the rdma4j project (or set RDMA4J_SHARED): fixtures are in ../shared/topology");
        }
        return dir.resolve("../shared/topology").normalize();
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Path fixtures = fixtures();
        vendorFile = fixtures.resolve("rccl/topo_8p_940.xml");
        tmp = Files.createTempDirectory("rdma4j-topo-bench");
        Process p = new ProcessBuilder(
                        "tar",
                        "-xjf",
                        fixtures.resolve(CAPTURE).toString(),
                        "-C",
                        tmp.toString(),
                        "--no-same-owner",
                        "--no-same-permissions")
                .inheritIO()
                .start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("tar -xjf " + fixtures.resolve(CAPTURE) + " failed: install tar and bzip2");
        }
        try (Stream<Path> s = Files.list(tmp)) {
            root = s.filter(d -> Files.isDirectory(d.resolve("sys")))
                    .findFirst()
                    .orElseThrow();
        }
        Topology t = scan();
        if (t.devices().isEmpty() || t.nics().isEmpty()) {
            throw new IllegalStateException("capture scanned to nothing: " + t);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        try (Stream<Path> s = Files.walk(tmp)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    public Topology scan() {
        return Topology.builder().fsroot(root).nicFilter("").build();
    }

    @Benchmark
    public int rankAll() {
        Topology t = scan();
        int n = 0;
        for (var node : t.numaNodes()) {
            n += t.rankNics(Location.numa(node.id())).size()
                    + t.rankNvme(Location.numa(node.id())).size();
        }
        return n + t.affinity().size();
    }

    @Benchmark
    public Topology parseVendorFile() {
        return Topology.builder().ncclXml(vendorFile).nicFilter("").build();
    }

    @Benchmark
    public long baselineRawAttributeReads() {
        long sum = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(root.resolve("sys/bus/pci/devices"))) {
            for (Path d : ds) {
                for (String attr : new String[] {"class", "vendor", "device", "numa_node", "local_cpulist"}) {
                    Path f = d.resolve(attr);
                    if (Files.isRegularFile(f)) {
                        sum += Files.readString(f, StandardCharsets.ISO_8859_1).length();
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sum;
    }
}
