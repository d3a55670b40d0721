package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.Extended;
import io.rdma4j.topology.FakeSysfs;
import io.rdma4j.topology.Fixtures;
import io.rdma4j.topology.Shapes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./rdma4j topo}: the JSON contract, parsed back, and the text matrix, on machines of
 * {@code ../shared/topology/README.md}: each on a machine written for the tests ({@link Shapes}, {@link FakeSysfs},
 * from the topology module's test-jar) and, in the extended suite, on its capture.
 */
class TopoCommandTest {
    private static final Pattern BDF = Pattern.compile("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
    private static final List<String> LEVELS = List.of("PIX", "PXB", "PHB", "NODE", "SYS");
    private static final Set<String> KINDS = Set.of("gpu", "accelerator", "nic", "nvme", "nvswitch", "other");

    @TempDir
    Path tmp;

    /**
     * A topology file written for the tests ({@link Shapes}, from the topology module's test-jar), copied to a file
     * that {@code --nccl-xml} can read.
     */
    private Path fixture(String name) {
        return Shapes.copy(name, tmp);
    }

    /** A real-machine capture in {@code ../shared/topology}; call it only from an {@link Extended} test's method. */
    private static Path capture(String rel) {
        return Fixtures.file(rel);
    }

    private static String run(String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int rc = new TopoCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(args);
        assertEquals(0, rc, "rdma4j topo " + String.join(" ", args));
        return buf.toString(StandardCharsets.UTF_8);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(String... args) {
        String[] all = new String[args.length + 1];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--json";
        return (Map<String, Object>) MiniJson.parse(run(all));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> m, String key) {
        Object v = m.get(key);
        assertNotNull(v, "missing key " + key + " in " + m.keySet());
        return (List<Map<String, Object>>) v;
    }

    /** Everything the contract promises, on any topology. */
    private static void checkContract(Map<String, Object> j) {
        for (Map<String, Object> n : list(j, "numaNodes")) {
            assertTrue(n.get("id") instanceof Double);
            assertTrue(n.get("cpus") instanceof List);
            assertEquals(!((List<?>) n.get("cpus")).isEmpty(), n.get("hasCpus"));
        }
        int compute = 0;
        for (Map<String, Object> d : list(j, "devices")) {
            String bdf = (String) d.get("bdf");
            assertTrue(BDF.matcher(bdf).matches(), bdf);
            assertTrue(KINDS.contains((String) d.get("kind")), String.valueOf(d.get("kind")));
            for (String k : List.of("vendor", "device", "classCode", "numaNode", "names")) {
                assertTrue(d.containsKey(k), k + " missing in " + d);
            }
            if (d.get("vendor") != null) {
                assertTrue(((String) d.get("vendor")).matches("[0-9a-f]{4}"), d.toString());
            }
            if (d.get("classCode") != null) {
                assertTrue(((String) d.get("classCode")).matches("[0-9a-f]{6}"), d.toString());
            }
            if (d.get("kind").equals("gpu") || d.get("kind").equals("accelerator")) {
                compute++;
            }
        }
        List<Map<String, Object>> affinity = list(j, "affinity");
        assertEquals(compute, affinity.size(), "one affinity entry per gpu/accelerator");
        assertEquals(list(j, "numaNodes").size(), list(j, "numaAffinity").size(), "one numaAffinity entry per node");
        List<Map<String, Object>> ranked = new java.util.ArrayList<>(affinity);
        ranked.addAll(list(j, "numaAffinity"));
        for (Map<String, Object> a : ranked) {
            assertTrue(a.containsKey("node")
                    || BDF.matcher((String) a.get("device")).matches());
            for (String key : List.of("nics", "nvme")) {
                int prev = -1;
                for (Map<String, Object> r : list(a, key)) {
                    assertTrue(BDF.matcher((String) r.get("bdf")).matches(), r.toString());
                    int level = LEVELS.indexOf((String) r.get("level"));
                    assertTrue(level >= 0, r.toString());
                    assertTrue(level >= prev, key + " not sorted best first: " + a);
                    prev = level;
                    assertTrue((Double) r.get("tieGroup") >= 0);
                }
            }
        }
    }

    @Test
    void jsonOfAVendorFileKeepsTheContractAndPairsEachMi300xWithItsNic() {
        pairsEachMi300xWithItsNic(fixture(Shapes.MI300X));
    }

    @Test
    @Extended
    void jsonOfAVendorFileKeepsTheContractAndPairsEachMi300xWithItsNicOnTheCapture() {
        pairsEachMi300xWithItsNic(capture(Fixtures.MI300X_CAPTURE));
    }

    /** Each MI300X's best NIC is the one on its ConnectX-7's switch, alone at PXB (README: 1:1 at PXB). */
    private static void pairsEachMi300xWithItsNic(Path file) {
        Map<String, Object> j = json("--nccl-xml", file.toString());
        checkContract(j);
        Map<String, Object> gpu0 = list(j, "affinity").get(0);
        assertEquals("0000:0c:00.0", gpu0.get("device"));
        Map<String, String> own = Map.of(
                "0000:0c:00.0",
                "0000:07:00.0",
                "0000:15:00.0",
                "0000:10:00.0",
                "0000:9f:00.0",
                "0000:9a:00.0",
                "0000:af:00.0",
                "0000:aa:00.0");
        Map<String, String> best = new TreeMap<>();
        for (Map<String, Object> a : list(j, "affinity")) {
            List<Map<String, Object>> nics = list(a, "nics");
            assertEquals("PXB", nics.get(0).get("level"), a.toString());
            assertEquals(1.0, nics.get(1).get("tieGroup"), "no second NIC ties with the GPU's own: " + a);
            best.put((String) a.get("device"), (String) nics.get(0).get("bdf"));
        }
        assertEquals(
                new TreeMap<>(own),
                best.entrySet().stream()
                        .filter(e -> own.containsKey(e.getKey()))
                        .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new)));
        Map<String, Object> nic = device(j, "0000:07:00.0");
        assertEquals("nic", nic.get("kind"));
        assertEquals("15b3", nic.get("vendor"));
        assertEquals("1021", nic.get("device"));
        assertEquals("020700", nic.get("classCode"));
        assertEquals(0.0, nic.get("numaNode"));
        assertEquals(List.of("mlx5_0"), nic.get("names"));
        // the PCIe switch inside the ConnectX-7 shares the NIC's vendor, but is a bridge, not a device of any kind
        assertTrue(list(j, "devices").stream().noneMatch(d -> "1979".equals(d.get("device"))), "15b3:1979 listed");
    }

    private static Map<String, Object> device(Map<String, Object> j, String bdf) {
        return list(j, "devices").stream()
                .filter(d -> d.get("bdf").equals(bdf))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no device " + bdf));
    }

    @Test
    void jsonReportsTiesThroughTieGroups() {
        reportsTies(fixture(Shapes.NDV4));
    }

    @Test
    @Extended
    void jsonReportsTiesThroughTieGroupsOnTheCapture() {
        reportsTies(capture(Fixtures.NDV4_CAPTURE));
    }

    /** NDv4: each GPU's two NICs behind its synthetic switch tie; the next NIC is worse. */
    private static void reportsTies(Path file) {
        Map<String, Object> j = json("--nccl-xml", file.toString());
        checkContract(j);
        assertEquals(8, list(j, "affinity").size());
        for (Map<String, Object> a : list(j, "affinity")) {
            List<Map<String, Object>> nics = list(a, "nics");
            assertEquals(0.0, nics.get(0).get("tieGroup"));
            assertEquals(0.0, nics.get(1).get("tieGroup"));
            assertEquals(1.0, nics.get(2).get("tieGroup"));
        }
    }

    @Test
    void jsonOfASysfsTreeWithAFiveDigitDomain() {
        hasTheFiveDigitDomain(FakeSysfs.qemuGuestWithFiveDigitDomain(tmp));
    }

    @Test
    @Extended
    void jsonOfACapturedTreeWithAFiveDigitDomain() throws Exception {
        hasTheFiveDigitDomain(unpack(Fixtures.DOMAIN32_CAPTURE));
    }

    private static void hasTheFiveDigitDomain(Path root) {
        Map<String, Object> j = json("--fsroot", root.toString());
        checkContract(j);
        Map<String, Object> scsi = device(j, "10000:00:04.0");
        assertEquals("1af4", scsi.get("vendor"));
        assertEquals("010000", scsi.get("classCode"));
        assertEquals("pci10000:00", scsi.get("hostBridge"));
        assertTrue(list(j, "affinity").isEmpty(), "the Cirrus VGA of a QEMU guest is no GPU");
        @SuppressWarnings("unchecked")
        Map<String, Object> summary = (Map<String, Object>) j.get("summary");
        assertNotNull(summary, "a captured tree's summary comes from its proc/");
        assertEquals(2.0, summary.get("logicalCpus"));
        assertEquals(2.0, summary.get("packages"));
    }

    private Path unpack(String tarball) throws Exception {
        return Fixtures.unpack(tarball, Files.createDirectories(tmp.resolve("capture")));
    }

    @Test
    void jsonOfThisMachineHasEmptyAffinityWhenItHasNoGpu() {
        Map<String, Object> j = json();
        checkContract(j);
        assertFalse(list(j, "numaNodes").isEmpty());
        @SuppressWarnings("unchecked")
        Map<String, Object> summary = (Map<String, Object>) j.get("summary");
        assertEquals("oshi", summary.get("source"));
        assertTrue((Double) summary.get("logicalCpus") >= 1);
    }

    @Test
    void textReportShowsTheMatrixWithLevelsAndBestMarks() {
        showsTheMatrix(fixture(Shapes.P4D));
    }

    @Test
    @Extended
    void textReportShowsTheMatrixWithLevelsAndBestMarksOnTheCapture() {
        showsTheMatrix(capture(Fixtures.P4D_CAPTURE));
    }

    /** p4d: GPU 0's own EFA is the best mark at PIX, the far socket's EFAs are SYS. */
    private static void showsTheMatrix(Path file) {
        String out = run("--nccl-xml", file.toString());
        assertTrue(out.contains("NUMA nodes:"), out);
        List<String> rows = out.lines().filter(l -> l.startsWith("GPU")).toList();
        assertEquals(8, rows.size(), out);
        assertTrue(rows.get(0).contains("*PIX") && rows.get(0).contains("SYS"), rows.get(0));
        assertTrue(out.contains("NIC0: 0000:10:1b.0"), out);
    }

    @Test
    void textReportSaysWhenThereIsNoRdmaNic() {
        saysThereIsNoRdmaNic(fixture(Shapes.NCV4));
    }

    @Test
    @Extended
    void textReportSaysWhenThereIsNoRdmaNicOnTheCapture() {
        saysThereIsNoRdmaNic(capture(Fixtures.NCV4_CAPTURE));
    }

    private static void saysThereIsNoRdmaNic(Path file) {
        String out = run("--nccl-xml", file.toString());
        assertTrue(out.contains("no RDMA NIC"), out);
    }

    /**
     * Every device a fixture lists is reported as its capture reports it (kind, ids, class, NUMA node and its source,
     * host bridge, bridge path, link, names, ports), on the same NUMA nodes; the files that stand for a whole machine
     * list exactly the capture's devices and rank them the same way.
     */
    @Test
    @Extended
    void fixturesReportTheirCapturesDevices() throws Exception {
        Map<String, Path> whole = Map.of(
                Shapes.P4D,
                capture(Fixtures.P4D_CAPTURE),
                Shapes.NDV4,
                capture(Fixtures.NDV4_CAPTURE),
                Shapes.NCV4,
                capture(Fixtures.NCV4_CAPTURE));
        for (Map.Entry<String, Path> e : whole.entrySet()) {
            Map<String, Object> mine = json("--nccl-xml", fixture(e.getKey()).toString());
            Map<String, Object> theirs = json("--nccl-xml", e.getValue().toString());
            sameNodesAndDevices(mine, theirs, e.getKey());
            assertEquals(list(theirs, "devices").size(), list(mine, "devices").size(), e.getKey());
            assertEquals(theirs.get("affinity"), mine.get("affinity"), e.getKey());
        }
        sameNodesAndDevices(
                json("--nccl-xml", fixture(Shapes.MI300X).toString()),
                json("--nccl-xml", capture(Fixtures.MI300X_CAPTURE).toString()),
                Shapes.MI300X);
        Map<String, Object> guest = json(
                "--fsroot",
                FakeSysfs.qemuGuestWithFiveDigitDomain(tmp.resolve("fixture")).toString());
        Map<String, Object> captured =
                json("--fsroot", unpack(Fixtures.DOMAIN32_CAPTURE).toString());
        sameNodesAndDevices(guest, captured, "QEMU guest");
        @SuppressWarnings("unchecked")
        Map<String, Object> summary = new TreeMap<>((Map<String, Object>) guest.get("summary"));
        @SuppressWarnings("unchecked")
        Map<String, Object> capturedSummary = new TreeMap<>((Map<String, Object>) captured.get("summary"));
        summary.remove("source");
        capturedSummary.remove("source");
        assertEquals(capturedSummary, summary, "QEMU guest: the summary from proc/");
    }

    private static void sameNodesAndDevices(Map<String, Object> mine, Map<String, Object> theirs, String what) {
        assertEquals(nodes(theirs), nodes(mine), what + ": NUMA nodes");
        for (Map<String, Object> d : list(mine, "devices")) {
            assertEquals(device(theirs, (String) d.get("bdf")), d, what);
        }
    }

    private static List<String> nodes(Map<String, Object> j) {
        return list(j, "numaNodes").stream()
                .map(n -> n.get("id") + " " + n.get("cpus"))
                .toList();
    }

    @Test
    void badUsageExitsTwo() {
        assertEquals(2, new TopoCommand(new PrintStream(new ByteArrayOutputStream())).run(new String[] {"--fsroot"}));
        assertEquals(2, new TopoCommand(new PrintStream(new ByteArrayOutputStream())).run(new String[] {"--bogus"}));
    }

    @Test
    void registeredInMain() {
        assertTrue(Main.commands().stream().anyMatch(c -> c.name().equals("topo")));
    }
}
