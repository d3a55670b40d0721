package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.Extended;
import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.FakeSysfs;
import io.rdma4j.topology.Fixtures;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.RdmaDevice;
import io.rdma4j.topology.Shapes;
import io.rdma4j.topology.Topology;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hand-written machines the engine's tests run on ({@link Shapes}, {@link FakeSysfs}, from the topology module's
 * test-jar) against the captures they stand for: every fact the scanner reads from a fixture (kind, ids, class, NUMA
 * node and where it came from, bridge chain, names, ports) must be what it reads from the capture, so a test that
 * passes on the fixture tests the real machine's shape.
 */
class TopologyFixturesTest {
    @TempDir
    Path tmp;

    /** Everything about a device that ranking and reporting use, in one comparable line. */
    private static String facts(PciDevice d) {
        String path = d.path().stream().map(TopologyFixturesTest::facts).collect(Collectors.joining(" > "));
        return d.address() + " " + d.kind() + " " + d.vendorHex() + ":" + d.deviceHex() + " class " + d.classHex()
                + " numa " + d.numaNode() + " (" + d.numaSource() + ") cpus " + d.localCpus() + " host bridge "
                + d.hostBridge() + " path [" + path + "] link " + d.link() + " names " + d.names() + " netdevs "
                + d.netdevs() + " ports " + d.ports();
    }

    private static String facts(PciBridge b) {
        return b.address()
                + String.format(" %04x:%04x", b.vendor() & 0xffff, b.device() & 0xffff)
                + (b.synthetic() ? " synthetic" : "");
    }

    private static Map<String, String> facts(List<PciDevice> devices) {
        return devices.stream()
                .collect(Collectors.toMap(
                        d -> d.address().toString(), TopologyFixturesTest::facts, (a, b) -> a, TreeMap::new));
    }

    private static Map<Integer, List<Integer>> cpus(Topology t) {
        return t.numaNodes().stream().collect(Collectors.toMap(n -> n.id(), n -> n.cpus(), (a, b) -> a, TreeMap::new));
    }

    private static void sameMachine(Topology fixture, Topology capture) {
        assertEquals(cpus(capture), cpus(fixture), "NUMA nodes and their CPUs");
        Map<String, String> captured = facts(capture.devices());
        Map<String, String> written = facts(fixture.devices());
        assertEquals(captured.keySet(), written.keySet(), "PCI functions");
        written.forEach((bdf, f) -> assertEquals(captured.get(bdf), f, bdf));
        assertEquals(
                capture.bridges().stream()
                        .map(TopologyFixturesTest::facts)
                        .sorted()
                        .toList(),
                fixture.bridges().stream()
                        .map(TopologyFixturesTest::facts)
                        .sorted()
                        .toList());
    }

    @Test
    @Extended
    void theP4dFileHoldsTheCapturesDevicesAndSwitches() {
        sameMachine(
                Explain.topology(Shapes.copy(Shapes.P4D, tmp)), Explain.topology(Fixtures.file(Fixtures.P4D_CAPTURE)));
    }

    @Test
    @Extended
    void theNdv4FileHoldsTheCapturesDevicesAndSwitches() {
        sameMachine(
                Explain.topology(Shapes.copy(Shapes.NDV4, tmp)),
                Explain.topology(Fixtures.file(Fixtures.NDV4_CAPTURE)));
    }

    @Test
    @Extended
    void theNcv4FileHoldsTheCapturesGpusAndNoNic() {
        Topology fixture = Explain.topology(Shapes.copy(Shapes.NCV4, tmp));
        Topology capture = Explain.topology(Fixtures.file(Fixtures.NCV4_CAPTURE));
        sameMachine(fixture, capture);
        assertTrue(fixture.nics().isEmpty() && capture.nics().isEmpty());
        String captureName = Path.of(Fixtures.NCV4_CAPTURE).getFileName().toString();
        assertEquals(
                capture.warnings(),
                fixture.warnings().stream()
                        .map(w -> w.replace(Shapes.NCV4, captureName))
                        .toList(),
                "the Ethernet interface without a PCI address is reported the same way");
    }

    /**
     * The sysfs fixture writes a few of the capture's 150 PCI functions: those must read the same, and the capture's
     * GPUs, accelerators, NICs and drives must be exactly the fixture's, so nothing the tests rank on is left out.
     */
    @Test
    @Extended
    void theXeonPhiTreeReadsLikeTheCaptureOnEveryDeviceItWrites() throws Exception {
        Topology fixture = Topology.builder()
                .fsroot(FakeSysfs.xeonPhiBox(tmp.resolve("fixture")))
                .nicFilter("")
                .build();
        Path unpacked = tmp.resolve("capture");
        assertTrue(unpacked.toFile().mkdirs());
        Topology capture = Topology.builder()
                .fsroot(Fixtures.unpack(Fixtures.XEON_PHI_CAPTURE, unpacked))
                .nicFilter("")
                .build();
        assertEquals(cpus(capture), cpus(fixture), "NUMA nodes and their CPUs");
        Map<String, String> captured = facts(capture.devices());
        facts(fixture.devices()).forEach((bdf, f) -> assertEquals(captured.get(bdf), f, bdf));
        for (DeviceKind kind : List.of(DeviceKind.GPU, DeviceKind.ACCELERATOR, DeviceKind.NIC, DeviceKind.NVME)) {
            assertEquals(facts(capture.devices(kind)), facts(fixture.devices(kind)), kind.toString());
        }
        Function<Topology, List<String>> verbs = t -> t.rdmaDevices().stream()
                .map((RdmaDevice r) -> r.name() + " " + r.pci() + " " + r.ports())
                .sorted()
                .toList();
        assertEquals(verbs.apply(capture), verbs.apply(fixture), "verbs devices, scif0 (no PCI function) included");
        Function<Topology, List<String>> nvme = t -> t.nvmeControllers().stream()
                .map(c -> c.name() + " " + c.pci() + " numa " + c.numaNode())
                .sorted()
                .toList();
        assertEquals(nvme.apply(capture), nvme.apply(fixture));
    }
}
