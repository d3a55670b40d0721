package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.TestPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The read-only real-machine captures in {@code ../shared/topology} and unpacking of its sysfs captures. Only
 * {@code @Extended} tests use it, inside their test methods: a bare clone has no ../shared, and the project's own
 * inputs are in {@link Shapes} and {@link FakeSysfs}. The engine's and the command line's tests use it too, from this
 * module's test-jar, to hold those inputs to the captures they stand for.
 */
public final class Fixtures {
    /** The capture {@link Shapes#P4D} reproduces. */
    public static final String P4D_CAPTURE = "nccl/aws-ofi-nccl/p4d-24xl-topo.xml";
    /** The capture {@link Shapes#NDV4} reproduces. */
    public static final String NDV4_CAPTURE = "azure/ndv4-topo.xml";
    /** The capture {@link Shapes#NCV4} reproduces. */
    public static final String NCV4_CAPTURE = "azure/ncv4-topo.xml";
    /** The capture {@link Shapes#MI300X} reproduces. */
    public static final String MI300X_CAPTURE = "rccl/topo_8p_940.xml";
    /** The sysfs capture {@link FakeSysfs#xeonPhiBox} reproduces. */
    public static final String XEON_PHI_CAPTURE = "hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2";
    /** The sysfs capture {@link FakeSysfs#qemuGuestWithFiveDigitDomain} reproduces. */
    public static final String DOMAIN32_CAPTURE = "hwloc/linux/2pa-pcidomain32bits.tar.bz2";

    private static final Map<Path, Path> UNPACKED = new ConcurrentHashMap<>();

    private Fixtures() {}

    /** @return {@code ../shared/topology}; fails the test where it is missing */
    public static Path dir() {
        Path d = TestPaths.shared().resolve("topology");
        assertTrue(
                Files.isDirectory(d), "fixtures missing: " + d + " (the read-only ../shared beside the project root)");
        return d;
    }

    /**
     * @param rel a capture's path relative to {@code ../shared/topology}, e.g. {@link #P4D_CAPTURE}
     * @return the capture; fails the test where it is missing
     */
    public static Path file(String rel) {
        Path p = dir().resolve(rel);
        assertTrue(Files.isRegularFile(p), "fixture missing: " + p);
        return p;
    }

    static Topology xml(String rel) {
        return Topology.builder().ncclXml(file(rel)).nicFilter("").build();
    }

    /**
     * Unpacks an hwloc sysfs capture with the system's tar (bzip2) into {@code into} and returns the folder that holds
     * {@code sys/} (the top folder inside a tarball can differ from its name). Captures may hold symbolic links and,
     * from some machines, device nodes that an unprivileged user cannot create: those failures are tolerated, any other
     * tar error fails the test.
     */
    public static Path unpack(String tarball, Path into) throws IOException, InterruptedException {
        Path archive = file(tarball);
        // memory-block links and CPU cache descriptions are half of a capture's files and nothing the scanner reads
        Process p = new ProcessBuilder(
                        "tar",
                        "-xjf",
                        archive.toString(),
                        "-C",
                        into.toString(),
                        "--no-same-owner",
                        "--no-same-permissions",
                        "--wildcards",
                        "--exclude=*/sys/devices/system/node/node*/memory[0-9]*",
                        "--exclude=*/sys/devices/system/memory",
                        "--exclude=*/sys/devices/system/cpu/cpu[0-9]*/cache")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        if (rc != 0) {
            List<String> serious = out.lines()
                    .filter(l -> !l.isBlank())
                    .filter(l -> !l.contains("Cannot mknod")
                            && !l.contains("Cannot change ownership")
                            && !l.contains("Cannot utime")
                            && !l.contains("Exiting with failure status due to previous errors"))
                    .toList();
            assertTrue(serious.isEmpty(), "tar -xjf " + archive + " failed (" + rc + "): " + out);
        }
        try (Stream<Path> s = Files.list(into)) {
            List<Path> roots =
                    s.filter(d -> Files.isDirectory(d.resolve("sys"))).toList();
            assertTrue(roots.size() == 1, "expected one folder with sys/ in " + archive + ", found " + roots);
            return roots.get(0);
        }
    }

    /**
     * {@link #unpack} on first use: the first call for a tarball and folder unpacks it, later ones return the same
     * root. For a test class whose checks all read one capture, unpacked into its static {@code @TempDir}.
     */
    public static Path unpackOnce(String tarball, Path into) {
        return UNPACKED.computeIfAbsent(into.resolve(Path.of(tarball).getFileName()), k -> {
            try {
                return unpack(tarball, into);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while unpacking " + tarball, e);
            }
        });
    }

    /**
     * Every GPU, accelerator, NIC and drive the scan of a capture places has the kind, bridge chain and (where hwloc
     * knows it) NUMA node that hwloc's own report of the same capture gives it, and the NUMA nodes have its CPUs.
     */
    static void agreesWithHwloc(Topology scanned, String hwlocXml) {
        Topology hwloc = xml(hwlocXml);
        List<PciDevice> placed = scanned.devices().stream()
                .filter(d -> d.kind() != DeviceKind.OTHER)
                .toList();
        assertFalse(placed.isEmpty());
        for (PciDevice d : placed) {
            PciDevice h = hwloc.device(d.address()).orElseThrow(() -> new AssertionError("hwloc lacks " + d.address()));
            assertEquals(d.kind(), h.kind(), d.address().toString());
            assertEquals(
                    d.path().stream().map(PciBridge::address).toList(),
                    h.path().stream().map(PciBridge::address).toList());
            if (h.numaNode() >= 0) {
                assertEquals(h.numaNode(), d.numaNode(), d.address().toString());
            }
        }
        assertEquals(
                hwloc.numaNodes().stream().map(NumaNode::cpus).toList(),
                scanned.numaNodes().stream().map(NumaNode::cpus).toList());
    }

    static PciAddress bdf(String s) {
        return PciAddress.parse(s);
    }
}
