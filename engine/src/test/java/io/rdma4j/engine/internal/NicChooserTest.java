package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.ffi.Extended;
import io.rdma4j.topology.FakeSysfs;
import io.rdma4j.topology.Fixtures;
import io.rdma4j.topology.Shapes;
import io.rdma4j.topology.Topology;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NIC a volume's connections leave by, on the machines of {@code ../shared/topology/README.md}: each behaviour runs
 * on a tree or file written here ({@link FakeSysfs}, {@link Shapes}) and, in the extended suite, on the real capture.
 */
class NicChooserTest {
    private static final InetAddress TARGET = address("10.1.0.9");

    @TempDir
    static Path scratch;
    /** The 2-socket Xeon with a Xeon Phi (83:00.0) and a ConnectX-3 (mlx4_0, 82:00.0) on NUMA 1, written here. */
    private static Topology phi;
    /** The same machine's capture, unpacked by the first extended test that needs it. */
    private static Topology phiCapture;

    @BeforeAll
    static void writeTheXeonPhiBox() throws IOException {
        phi = Topology.builder()
                .fsroot(FakeSysfs.xeonPhiBox(Files.createDirectory(scratch.resolve("fixture"))))
                .nicFilter("")
                .build();
    }

    private static synchronized Topology phiCapture() throws IOException {
        if (phiCapture == null) {
            Path into = Files.createDirectory(scratch.resolve("capture"));
            try {
                phiCapture = Topology.builder()
                        .fsroot(Fixtures.unpack(Fixtures.XEON_PHI_CAPTURE, into))
                        .nicFilter("")
                        .build();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while unpacking " + Fixtures.XEON_PHI_CAPTURE, e);
            }
        }
        return phiCapture;
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

    /** The interface the topology gives mlx4_0, found through the chooser itself (ib0 on the real machine). */
    private static String mlx4Netdev(Topology phi) {
        return NicChooser.choose(phi, null, MemoryLocation.numa(1), TARGET, nd -> List.of(address("10.1.0.5")))
                .netdev();
    }

    @Test
    void theHcasInterfaceIsTheOneOnItsPciFunction() {
        assertEquals("ib0", mlx4Netdev(phi));
    }

    @Test
    void picksTheNicNearestTheCoprocessorAndLeavesFromItsAddress() {
        picksTheNicNearestTheCoprocessor(phi);
    }

    @Test
    @Extended
    void picksTheNicNearestTheCoprocessorAndLeavesFromItsAddressOnTheCapture() throws IOException {
        picksTheNicNearestTheCoprocessor(phiCapture());
    }

    private static void picksTheNicNearestTheCoprocessor(Topology phi) {
        String nd = mlx4Netdev(phi);
        NicChooser.Choice c = NicChooser.choose(
                phi, null, MemoryLocation.gpu("0000:83:00.0"), TARGET, addresses(Map.of(nd, "10.1.0.5")));
        assertEquals("mlx4_0", c.nic());
        assertEquals("PHB", c.level(), "the Phi and the HCA share host bridge pci0000:80");
        assertEquals(address("10.1.0.5"), c.source());
        assertTrue(c.reason().contains("best-ranked NIC for gpu 0000:83:00.0 (PHB)"), c.reason());
        assertEquals("mlx4_0 (" + nd + " 10.1.0.5)", c.label());
    }

    @Test
    void memoryOnTheOtherSocketStillLeavesByTheOnlyNicAndSaysItIsFar() {
        leavesByTheOnlyNicFromTheOtherSocket(phi);
    }

    @Test
    @Extended
    void memoryOnTheOtherSocketStillLeavesByTheOnlyNicAndSaysItIsFarOnTheCapture() throws IOException {
        leavesByTheOnlyNicFromTheOtherSocket(phiCapture());
    }

    /** The Intel Ethernet port on NUMA 0 has no verbs device, so it is no candidate however near it is. */
    private static void leavesByTheOnlyNicFromTheOtherSocket(Topology phi) {
        NicChooser.Choice c = NicChooser.choose(
                phi,
                null,
                MemoryLocation.numa(0),
                TARGET,
                addresses(Map.of(mlx4Netdev(phi), "10.1.0.5", "eth0", "10.1.0.6")));
        assertEquals("mlx4_0", c.nic());
        assertEquals("SYS", c.level());
    }

    @Test
    void aNicWithoutAnAddressOfTheTargetsFamilyFallsBackToTheKernelRouteAndSaysWhy() {
        fallsBackToTheKernelRoute(phi);
    }

    @Test
    @Extended
    void aNicWithoutAnAddressOfTheTargetsFamilyFallsBackToTheKernelRouteAndSaysWhyOnTheCapture() throws IOException {
        fallsBackToTheKernelRoute(phiCapture());
    }

    private static void fallsBackToTheKernelRoute(Topology phi) {
        String nd = mlx4Netdev(phi);
        NicChooser.Choice none = NicChooser.choose(phi, null, MemoryLocation.numa(1), TARGET, addresses(Map.of()));
        assertNull(none.source());
        assertEquals("kernel route", none.label());
        assertTrue(none.reason().contains("mlx4_0 has no usable IPv4 address on " + nd), none.reason());
        // scif0 is an RDMA device without a PCI function or ports: named, never chosen
        assertTrue(none.reason().contains("scif0 has no network interface"), none.reason());
        assertTrue(none.reason().endsWith("kernel route to 10.1.0.9"), none.reason());
        NicChooser.Choice v6 = NicChooser.choose(
                phi, null, MemoryLocation.numa(1), address("fd00::9"), addresses(Map.of(nd, "10.1.0.5")));
        assertNull(v6.source(), "an IPv4 address cannot reach an IPv6 target");
        assertTrue(v6.reason().contains("no usable IPv6 address"), v6.reason());
    }

    @Test
    void aMachineWithoutRdmaNicsUsesTheKernelRouteAndNamesTheTopology() {
        usesTheKernelRouteWithoutRdmaNics(Shapes.copy(Shapes.NCV4, scratch));
    }

    @Test
    @Extended
    void aMachineWithoutRdmaNicsUsesTheKernelRouteAndNamesTheTopologyOnTheCapture() {
        usesTheKernelRouteWithoutRdmaNics(Fixtures.file(Fixtures.NCV4_CAPTURE));
    }

    private static void usesTheKernelRouteWithoutRdmaNics(Path ncv4File) {
        Topology ncv4 = Topology.builder().ncclXml(ncv4File).nicFilter("").build();
        NicChooser.Choice c =
                NicChooser.choose(ncv4, null, MemoryLocation.numa(0), TARGET, nd -> List.of(address("10.1.0.5")));
        assertNull(c.nic());
        assertTrue(c.reason().startsWith("no RDMA NIC in the topology"), c.reason());
        assertTrue(c.reason().contains(ncv4File.toString()), c.reason());
    }

    @Test
    void nicsListedWithoutNetworkInterfacesAreNamedNotInvented() {
        namesNicsWithoutInterfaces(Shapes.copy(Shapes.NDV4, scratch));
    }

    @Test
    @Extended
    void nicsListedWithoutNetworkInterfacesAreNamedNotInventedOnTheCapture() {
        namesNicsWithoutInterfaces(Fixtures.file(Fixtures.NDV4_CAPTURE));
    }

    /** Azure NDv4: GPU 0003 pairs with NICs 0103/0104 behind one switch, but the file lists no network interfaces. */
    private static void namesNicsWithoutInterfaces(Path ndv4File) {
        Topology ndv4 = Topology.builder().ncclXml(ndv4File).nicFilter("").build();
        NicChooser.Choice c = NicChooser.choose(
                ndv4, null, MemoryLocation.gpu("0003:00:00.0"), TARGET, nd -> List.of(address("10.1.0.5")));
        assertNull(c.source());
        assertNull(c.nic());
        // the GPU's two tied NICs come first, in address order, and neither is replaced by a guess
        assertTrue(
                c.reason()
                        .startsWith(
                                "0103:00:00.0 has no network interface; " + "0104:00:00.0 has no network interface"),
                c.reason());
    }

    /** Neither case reads the topology's devices, so the fixture alone covers them. */
    @Test
    void loopbackTargetsAndUnreadableTopologiesNeedNoNic() {
        NicChooser.Choice lo = NicChooser.choose(
                phi, null, MemoryLocation.HOST, address("127.0.0.1"), nd -> List.of(address("10.1.0.5")));
        assertNull(lo.source());
        assertTrue(lo.reason().contains("loopback"), lo.reason());
        NicChooser.Choice unread = NicChooser.choose(
                null, "no /sys here", MemoryLocation.HOST, TARGET, nd -> List.of(address("10.1.0.5")));
        assertTrue(unread.reason().startsWith("topology unreadable (no /sys here)"), unread.reason());
    }

    @Test
    void unknownMemoryLocationTakesTheFirstNicAndAsksForALocation() {
        takesTheFirstNicForUnknownMemory(phi);
    }

    @Test
    @Extended
    void unknownMemoryLocationTakesTheFirstNicAndAsksForALocationOnTheCapture() throws IOException {
        takesTheFirstNicForUnknownMemory(phiCapture());
    }

    private static void takesTheFirstNicForUnknownMemory(Topology phi) {
        NicChooser.Choice c = NicChooser.choose(
                phi, null, MemoryLocation.HOST, TARGET, addresses(Map.of(mlx4Netdev(phi), "10.1.0.5")));
        assertEquals("mlx4_0", c.nic());
        assertEquals("-", c.level());
        assertTrue(c.reason().contains("register it with a MemoryLocation"), c.reason());
    }
}
