package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.libfabric.Libfabric;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench engine-write} runs the engine across two processes and ends, with {@code --json}, on one line of rows:
 * checked for shape and for rates that were measured (non-zero), never for speed.
 */
class EngineWriteRunTest {
    private static final Pattern ROW = Pattern.compile(
            "\\{\"provider\": \"(\\w+)\", \"bytes\": (\\d+), \"engineGBps\":"
                    + " ([0-9.]+), \"rawJavaGBps\": ([0-9.]+), \"fabtestsGBps\": (null|[0-9.]+), \"overheadNsPerOp\": (-?\\d+)}");

    @Test
    void jsonRowsCarryEachSideOfEverySize() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc;
        try (PrintStream p = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            System.setOut(p);
            rc = new EngineWriteRun().run(new String[] {
                "--providers",
                "shm",
                "--sizes",
                "4096,65536",
                "--seconds",
                "0.05",
                "--window",
                "8",
                "--lanes",
                "2",
                "--json"
            });
        } finally {
            System.setOut(saved);
        }
        String said = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, said);
        List<String> lines = said.lines().toList();
        String last = lines.getLast();
        assertTrue(last.startsWith("{\"rows\": [") && last.endsWith("]}"), said);
        Matcher m = ROW.matcher(last);
        long[] sizes = {4096, 65536};
        for (long size : sizes) {
            assertTrue(m.find(), "a row for " + size + " B in " + last);
            assertEquals("shm", m.group(1));
            assertEquals(size, Long.parseLong(m.group(2)));
            assertTrue(Double.parseDouble(m.group(3)) > 0, "engine rate measured: " + last);
            assertTrue(Double.parseDouble(m.group(4)) > 0, "raw loop rate measured: " + last);
            String c = System.getenv("RDMA4J_FABTESTS");
            assertEquals(c == null || c.isBlank(), m.group(5).equals("null"), "a C rate exactly where fabtests is set");
        }
        assertTrue(said.contains("the engine across two processes (2 lane(s) per NIC"), said);
    }

    @Test
    void batchRunMovesScatteredBlocksAndReportsCostPerDescriptor() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int rc;
        try (PrintStream p = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            System.setOut(p);
            rc = new EngineBatchRun().run(new String[] {
                "--providers", "shm", "--blocks", "50", "--seconds", "0.05", "--window", "8", "--json"
            });
        } finally {
            System.setOut(saved);
        }
        String said = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, said);
        assertTrue(said.contains("50 descriptors per batch after merging"), said);
        Matcher m = Pattern.compile("\\{\"provider\": \"shm\", \"blockBytes\": 4096, \"blocks\": 50,"
                        + " \"batchGBps\": ([0-9.]+), \"singleWritesGBps\": ([0-9.]+), \"rawJavaGBps\": ([0-9.]+),"
                        + " \"fabtestsGBps\": (null|[0-9.]+), \"overheadNsPerDescriptor\": (-?\\d+),"
                        + " \"allocatedBytesPerDescriptor\": ([0-9.]+)}")
                .matcher(said.lines().toList().getLast());
        assertTrue(m.find(), said);
        for (int g = 1; g <= 3; g++) {
            assertTrue(Double.parseDouble(m.group(g)) > 0, "rate " + g + " measured: " + said);
        }
    }

    @Test
    void aFabtestsDirectoryWithoutTheBenchmarkIsNamed(@TempDir Path dir) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Fabtests.in(dir));
        assertTrue(e.getMessage().contains("holds no executable fi_rma_bw"), e.getMessage());
        assertTrue(e.getMessage().contains("unset it"), e.getMessage());
    }
}
