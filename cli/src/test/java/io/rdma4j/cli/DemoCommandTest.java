package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.libfabric.Libfabric;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The demo end to end with a smaller size, and the target catching a corrupted byte. */
class DemoCommandTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @Test
    void demoWritesAndVerifiesOverShmAndTcp() throws Exception {
        PrintStream saved = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int rc;
        try (PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            rc = new DemoCommand().run(new String[] {"--size", "32m", "--chunk", "1m", "--lanes", "4"});
        } finally {
            System.setOut(saved);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, out);
        assertTrue(out.contains("shm  32 MiB in") && out.contains("tcp  32 MiB in"), out);
        assertTrue(out.contains("every byte verified at the target"), out);
        assertTrue(out.contains("per lane: lane 0") && out.contains("lane 3"), out);
        assertTrue(out.contains("checksum verified"), out);
    }

    @Test
    void targetReportsACorruptedByteAndTheDemoFails() throws Exception {
        long size = 8L << 20;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(size, 4096);
            for (long off = 0; off < size; off += 8) {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, off, DemoTarget.word(off));
            }
            long bad = 5 * 1024 * 1024 + 40;
            source.set(ValueLayout.JAVA_BYTE, bad + 3, (byte) ~source.get(ValueLayout.JAVA_BYTE, bad + 3));
            DemoCommand.Result r = DemoCommand.runOne("shm", source, 1 << 20, 4);
            assertFalse(r.verified());
            assertEquals("target says: MISMATCH " + bad, r.verdict());
        }
    }

    @Test
    void infoListsLibfabricAndItsProviders() {
        PrintStream saved = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int rc;
        try (PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
            System.setOut(capture);
            rc = new InfoCommand().run(new String[0]);
        } finally {
            System.setOut(saved);
        }
        String out = buf.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, out);
        assertTrue(out.contains("libfabric.so.1     libfabric " + Libfabric.versionString()), out);
        assertTrue(out.lines().anyMatch(l -> l.trim().startsWith("shm ") && l.contains("FI_EP_RDM")), out);
        assertTrue(out.contains("libcuda.so.1"), out);
    }
}
