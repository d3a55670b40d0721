package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./rdma4j topo}: the JSON contract, parsed back, and the text matrix. */
class TopoCommandTest {
    private static final Pattern BDF = Pattern.compile("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
    private static final List<String> LEVELS = List.of("PIX", "PXB", "PHB", "NODE", "SYS");
    private static final Set<String> KINDS = Set.of("gpu", "accelerator", "nic", "nvme", "nvswitch", "other");

    @TempDir
    Path tmp;

    static Path fixtures() {
        String env = System.getenv("RDMA4J_SHARED");
        Path shared = env != null ? Path.of(env)
                : Path.of(System.getProperty("rdma4j.project.root", "..")).resolve("../shared").normalize();
        Path p = shared.resolve("topology");
        assertTrue(Files.isDirectory(p), "fixtures missing: " + p);
        return p;
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
            assertTrue(a.containsKey("node") || BDF.matcher((String) a.get("device")).matches());
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
        Map<String, Object> j = json("--nccl-xml", fixtures().resolve("rccl/topo_8p_940.xml").toString());
        checkContract(j);
        Map<String, Object> gpu0 = list(j, "affinity").get(0);
        assertEquals("0000:0c:00.0", gpu0.get("device"));
        Map<String, Object> best = list(gpu0, "nics").get(0);
        assertEquals("0000:07:00.0", best.get("bdf"));
        assertEquals("PXB", best.get("level"));
        Map<String, Object> nic = list(j, "devices").stream().filter(d -> d.get("bdf").equals("0000:07:00.0")).findFirst().orElseThrow();
        assertEquals("nic", nic.get("kind"));
        assertEquals("15b3", nic.get("vendor"));
        assertEquals("1021", nic.get("device"));
        assertEquals("020700", nic.get("classCode"));
        assertEquals(0.0, nic.get("numaNode"));
        assertEquals(List.of("mlx5_0"), nic.get("names"));
    }

    @Test
    void jsonReportsTiesThroughTieGroups() {
        Map<String, Object> j = json("--nccl-xml", fixtures().resolve("azure/ndv4-topo.xml").toString());
        checkContract(j);
        for (Map<String, Object> a : list(j, "affinity")) {
            List<Map<String, Object>> nics = list(a, "nics");
            assertEquals(0.0, nics.get(0).get("tieGroup"));
            assertEquals(0.0, nics.get(1).get("tieGroup"));
            assertEquals(1.0, nics.get(2).get("tieGroup"));
        }
    }

    @Test
    void jsonOfACapturedTreeWithAFiveDigitDomain() throws Exception {
        Process p = new ProcessBuilder("tar", "-xjf", fixtures().resolve("hwloc/linux/2pa-pcidomain32bits.tar.bz2").toString(),
                "-C", tmp.toString(), "--no-same-owner", "--no-same-permissions").inheritIO().start();
        assertEquals(0, p.waitFor());
        Map<String, Object> j = json("--fsroot", tmp.resolve("2pa-pcidomain32bits").toString());
        checkContract(j);
        assertTrue(list(j, "devices").stream().anyMatch(d -> d.get("bdf").equals("10000:00:04.0")));
        assertTrue(list(j, "affinity").isEmpty());
        assertNotNull(j.get("summary"));
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
        String out = run("--nccl-xml", fixtures().resolve("nccl/aws-ofi-nccl/p4d-24xl-topo.xml").toString());
        assertTrue(out.contains("NUMA nodes:"), out);
        List<String> rows = out.lines().filter(l -> l.startsWith("GPU")).toList();
        assertEquals(8, rows.size(), out);
        assertTrue(rows.get(0).contains("*PIX") && rows.get(0).contains("SYS"), rows.get(0));
        assertTrue(out.contains("NIC0: 0000:10:1b.0"), out);
    }

    @Test
    void textReportSaysWhenThereIsNoRdmaNic() {
        String out = run("--nccl-xml", fixtures().resolve("azure/ncv4-topo.xml").toString());
        assertTrue(out.contains("no RDMA NIC"), out);
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
