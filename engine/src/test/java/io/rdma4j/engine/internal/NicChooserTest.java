package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.ffi.TestPaths;
import io.rdma4j.topology.Topology;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NIC a volume's connections leave by, on topologies captured from real machines (../shared/topology). */
class NicChooserTest {
    @TempDir
    static Path unpacked;
    private static Topology phi;
    private static InetAddress target;

    /** The 2-socket Xeon with a Xeon Phi (83:00.0) and a ConnectX-3 (mlx4_0, 82:00.0) on NUMA 1. */
    @BeforeAll
    static void unpack() throws Exception {
        Path tarball = TestPaths.shared().resolve("topology/hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2");
        assertTrue(Files.isRegularFile(tarball), "fixture missing: " + tarball);
        Process p = new ProcessBuilder("tar", "-xjf", tarball.toString(), "-C", unpacked.toString(), "--no-same-owner", "--no-same-permissions",
                "--wildcards", "--exclude=*/sys/devices/system/node/node*/memory[0-9]*", "--exclude=*/sys/devices/system/memory",
                "--exclude=*/sys/devices/system/cpu/cpu[0-9]*/cache").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        try (Stream<Path> s = Files.list(unpacked)) {
            Path root = s.filter(d -> Files.isDirectory(d.resolve("sys"))).findFirst().orElseThrow(() -> new AssertionError("tar: " + out));
            phi = Topology.builder().fsroot(root).nicFilter("").build();
        }
        target = InetAddress.getByName("10.1.0.9");
    }

    private static NicChooser.Interfaces addresses(Map<String, String> byNetdev) {
        return nd -> byNetdev.containsKey(nd) ? List.of(address(byNetdev.get(nd))) : List.of();
    }

    private static InetAddress address(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static String mlx4Netdev() {
        return NicChooser.choose(phi, null, MemoryLocation.numa(1), target, nd -> List.of(address("10.1.0.5"))).netdev();
    }

    @Test
    void picksTheNicNearestTheCoprocessorAndLeavesFromItsAddress() {
        String nd = mlx4Netdev();
        NicChooser.Choice c = NicChooser.choose(phi, null, MemoryLocation.gpu("0000:83:00.0"), target, addresses(Map.of(nd, "10.1.0.5")));
        assertEquals("mlx4_0", c.nic());
        assertEquals("PHB", c.level(), "the Phi and the HCA share host bridge pci0000:80");
        assertEquals(address("10.1.0.5"), c.source());
        assertTrue(c.reason().contains("best-ranked NIC for gpu 0000:83:00.0 (PHB)"), c.reason());
        assertEquals("mlx4_0 (" + nd + " 10.1.0.5)", c.label());
    }

    @Test
    void memoryOnTheOtherSocketStillLeavesByTheOnlyNicAndSaysItIsFar() {
        NicChooser.Choice c = NicChooser.choose(phi, null, MemoryLocation.numa(0), target, addresses(Map.of(mlx4Netdev(), "10.1.0.5")));
        assertEquals("mlx4_0", c.nic());
        assertEquals("SYS", c.level());
    }

    @Test
    void aNicWithoutAnAddressOfTheTargetsFamilyFallsBackToTheKernelRouteAndSaysWhy() {
        String nd = mlx4Netdev();
        NicChooser.Choice none = NicChooser.choose(phi, null, MemoryLocation.numa(1), target, addresses(Map.of()));
        assertNull(none.source());
        assertEquals("kernel route", none.label());
        assertTrue(none.reason().contains("mlx4_0 has no usable IPv4 address on " + nd), none.reason());
        assertTrue(none.reason().endsWith("kernel route to 10.1.0.9"), none.reason());
        NicChooser.Choice v6 = NicChooser.choose(phi, null, MemoryLocation.numa(1), address("fd00::9"), addresses(Map.of(nd, "10.1.0.5")));
        assertNull(v6.source(), "an IPv4 address cannot reach an IPv6 target");
        assertTrue(v6.reason().contains("no usable IPv6 address"), v6.reason());
    }

    @Test
    void aMachineWithoutRdmaNicsUsesTheKernelRouteAndNamesTheTopology() {
        Topology ncv4 = Topology.builder().ncclXml(TestPaths.shared().resolve("topology/azure/ncv4-topo.xml")).nicFilter("").build();
        NicChooser.Choice c = NicChooser.choose(ncv4, null, MemoryLocation.numa(0), target, nd -> List.of(address("10.1.0.5")));
        assertNull(c.nic());
        assertTrue(c.reason().startsWith("no RDMA NIC in the topology"), c.reason());
    }

    @Test
    void nicsListedWithoutNetworkInterfacesAreNamedNotInvented() {
        // Azure NDv4: GPU 0003 pairs with NICs 0103/0104 behind one switch, but the file lists no network interfaces
        Topology ndv4 = Topology.builder().ncclXml(TestPaths.shared().resolve("topology/azure/ndv4-topo.xml")).nicFilter("").build();
        String gpu = ndv4.computeDevices().stream().map(d -> d.address().toString()).filter(a -> a.contains(":03:") || a.startsWith("0003"))
                .findFirst().orElseThrow();
        NicChooser.Choice c = NicChooser.choose(ndv4, null, MemoryLocation.gpu(gpu), target, nd -> List.of(address("10.1.0.5")));
        assertNull(c.source());
        assertTrue(c.reason().contains("has no network interface"), c.reason());
    }

    @Test
    void loopbackTargetsAndUnreadableTopologiesNeedNoNic() {
        NicChooser.Choice lo = NicChooser.choose(phi, null, MemoryLocation.HOST, address("127.0.0.1"), nd -> List.of(address("10.1.0.5")));
        assertNull(lo.source());
        assertTrue(lo.reason().contains("loopback"), lo.reason());
        NicChooser.Choice unread = NicChooser.choose(null, "no /sys here", MemoryLocation.HOST, target, nd -> List.of(address("10.1.0.5")));
        assertTrue(unread.reason().startsWith("topology unreadable (no /sys here)"), unread.reason());
    }

    @Test
    void unknownMemoryLocationTakesTheFirstNicAndAsksForALocation() {
        NicChooser.Choice c = NicChooser.choose(phi, null, MemoryLocation.HOST, target, addresses(Map.of(mlx4Netdev(), "10.1.0.5")));
        assertEquals("mlx4_0", c.nic());
        assertEquals("-", c.level());
        assertTrue(c.reason().contains("register it with a MemoryLocation"), c.reason());
    }
}
