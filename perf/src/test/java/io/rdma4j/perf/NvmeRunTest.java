package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code bench nvme} ends, with {@code --json}, on one line with a row per workload: checked for shape and for rates
 * that were measured (non-zero), never for speed. Against the project's loopback NVMe/TCP peer without a baseline; and,
 * where {@code RDMA4J_SPDK} names an SPDK build, against SPDK's own target with {@code spdk_nvme_perf} beside it, in
 * two alternating rounds whose ratios and median the rows carry.
 */
class NvmeRunTest {
    private static final String FIGURES =
            "\\{\"iops\": ([0-9]+), \"MBps\": ([0-9.]+), \"p50Us\": ([0-9.]+), \"p99Us\": ([0-9.]+)}";
    private static final Pattern ROW = Pattern.compile("\\{\"workload\": \"([^\"]+)\", \"bytes\": (\\d+), \"qd\":"
            + " (\\d+), \"rdma4j\": " + FIGURES + ", \"rdma4jPolled\": " + FIGURES + ", \"spdk\": (null|" + FIGURES
            + "), \"kernel\": null, \"rdma4jOverSpdk\": (null|[0-9.]+), \"polledOverSpdk\": (null|[0-9.]+),"
            + " \"polledOverSpdkRounds\": \\[([0-9., ]*)], \"polledOverSpdkMedian\": (null|[0-9.]+),"
            + " \"rdma4jOverSpdkRounds\": \\[([0-9., ]*)], \"rdma4jOverSpdkMedian\": (null|[0-9.]+)}");

    private static String bench(String... args) throws Exception {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc;
        try (PrintStream p = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            System.setOut(p);
            rc = new NvmeRun().run(args);
        } finally {
            System.setOut(saved);
        }
        String said = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, said);
        return said;
    }

    /** {@return the rows of the last line, checked for shape; each side present where expected, rates non-zero} */
    private static void checkRows(String said, boolean spdk, int rounds) {
        String last = said.lines().toList().getLast();
        assertTrue(last.startsWith("{\"rows\": [") && last.endsWith("]}"), said);
        Matcher m = ROW.matcher(last);
        String[] names = {
            "4KiB randread QD1", "4KiB randread QD32", "4KiB randwrite QD1", "4KiB randwrite QD32",
            "128KiB read QD8", "128KiB write QD8", "1MiB read QD8", "1MiB write QD8"
        };
        for (String name : names) {
            assertTrue(m.find(), "a row for " + name + " in " + last);
            assertEquals(name, m.group(1));
            assertTrue(Long.parseLong(m.group(4)) > 0, "rdma4j measured no I/O in " + m.group());
            assertTrue(Long.parseLong(m.group(8)) > 0, "the polled queue measured no I/O in " + m.group());
            assertEquals(spdk, !m.group(12).equals("null"), m.group());
            assertEquals(spdk, !m.group(17).equals("null"), m.group());
            assertEquals(spdk, !m.group(18).equals("null"), m.group());
            if (spdk) {
                assertTrue(Long.parseLong(m.group(13)) > 0, "SPDK measured no I/O in " + m.group());
            }
            checkRounds(said, m, name, "polled/SPDK", m.group(19), m.group(20), rounds);
            checkRounds(said, m, name, "rdma4j/SPDK", m.group(21), m.group(22), rounds);
        }
        assertTrue(!m.find(), "8 rows only: " + last);
    }

    /** One side's ratios over the rounds: one a round, and the median of them, printed beside. */
    private static void checkRounds(
            String said, Matcher m, String name, String what, String list, String median, int rounds) {
        String[] each = list.isEmpty() ? new String[0] : list.split(", ");
        assertEquals(rounds > 1 ? rounds : 0, each.length, what + ": a ratio per round in " + m.group());
        assertEquals(rounds > 1, !median.equals("null"), m.group());
        if (rounds > 1) {
            java.util.List<Double> ratios =
                    java.util.Arrays.stream(each).map(Double::parseDouble).toList();
            assertTrue(ratios.stream().allMatch(r -> r > 0), m.group());
            // the median is of the rounds printed beside it (to the printed precision)
            assertEquals(NvmeRun.median(ratios), Double.parseDouble(median), 0.0015, m.group());
            assertTrue(
                    said.contains(String.format("%-22s %s over %d alternating rounds: median ", name, what, rounds)),
                    said);
        }
    }

    @Test
    void jsonRowsCarryEveryWorkloadAgainstTheLoopbackPeer() throws Exception {
        try (NvmeTcpLoopTarget t = new NvmeTcpLoopTarget(1 << 20)) {
            String said = bench(
                    "--tcp",
                    "127.0.0.1:" + t.address().getPort(),
                    "--nqn",
                    NvmeTcpLoopTarget.NQN,
                    "--seconds",
                    "0.05",
                    "--warmup",
                    "0.02",
                    "--no-spdk",
                    "--json");
            assertTrue(said.contains("(no baseline: set RDMA4J_SPDK"), said);
            checkRows(said, false, 1);
        }
    }

    @Test
    void spdkPerfRunsBesideItAgainstSpdksOwnTarget() throws Exception {
        assumeTrue(System.getenv("RDMA4J_SPDK") != null, "RDMA4J_SPDK names no SPDK build (perf/README.md)");
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String said = bench(
                "--spdk-target",
                "--tcp",
                "127.0.0.1:" + port,
                "--seconds",
                "1",
                "--warmup",
                "0.1",
                "--rounds",
                "2",
                "--json");
        checkRows(said, true, 2);
    }
}
