package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The plain progress lines and the options that shape them; the commands' own runs are in NvmeTcpCliTest. */
class ProgressTest {
    @Test
    void plainLineSaysBytesPercentRateAndTimeLeft() {
        long half = 512L << 20;
        assertEquals(
                "rdma4j nvme write: 512.0 MiB of 1.0 GiB (50%), 1.1 GB/s, ETA 0:00:01",
                Progress.line("nvme write", half, 2 * half, 500_000_000L, false));
        assertEquals(
                "rdma4j nvme write: 1.0 GiB of 1.0 GiB (100%), 536.9 MB/s, in 0:00:02",
                Progress.line("nvme write", 2 * half, 2 * half, 2_000_000_000L, true));
        assertEquals(
                "rdma4j demo shm: 0 B of 64.0 KiB (0%), 0.0 MB/s, ETA ?",
                Progress.line("demo shm", 0, 64 << 10, 1_000_000L, false));
        // 99.99% is not 100% until the last byte
        assertTrue(Progress.line("x", 9999, 10000, 1, false).contains("(99%)"));
    }

    @Test
    void optionsAreTakenOutOfTheCommandsArguments() {
        List<String> args = new ArrayList<>(List.of("write", "--no-progress", "--in", "f", "--progress-every", "0.5"));
        ProgressOptions o = ProgressOptions.take(args);
        assertEquals(List.of("write", "--in", "f"), args);
        assertFalse(o.enabled());
        assertEquals(Duration.ofMillis(500), o.every());
        ProgressOptions none = ProgressOptions.take(new ArrayList<>(List.of("read")));
        assertTrue(none.enabled());
        assertEquals(ProgressOptions.EVERY, none.every());
        IllegalArgumentException bad = assertThrows(
                IllegalArgumentException.class,
                () -> ProgressOptions.take(new ArrayList<>(List.of("--progress-every", "soon"))));
        assertTrue(bad.getMessage().startsWith("--progress-every 'soon' is not a number of seconds"), bad.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> ProgressOptions.take(new ArrayList<>(List.of("--progress-every"))));
    }

    @Test
    void plainLinesComeInOrderAndEndAtHundredPercent() {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setErr(e);
            assertFalse(Terminal.stderrIsTerminal(), "the tests run with stderr on a pipe");
            try (Progress p = Progress.start("test", 4096, new ProgressOptions(true, Duration.ZERO))) {
                for (int i = 0; i < 4; i++) {
                    p.add(1024);
                }
            }
        } finally {
            System.setErr(saved);
        }
        List<String> lines = err.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(4, lines.size(), lines::toString);
        assertTrue(lines.get(0).startsWith("rdma4j test: 1.0 KiB of 4.0 KiB (25%), "), lines::toString);
        assertTrue(lines.get(1).startsWith("rdma4j test: 2.0 KiB of 4.0 KiB (50%), "), lines::toString);
        assertTrue(lines.get(2).startsWith("rdma4j test: 3.0 KiB of 4.0 KiB (75%), "), lines::toString);
        assertTrue(
                lines.get(3).matches("rdma4j test: 4.0 KiB of 4.0 KiB \\(100%\\), .* in \\d:\\d\\d:\\d\\d"),
                lines::toString);
    }

    @Test
    void aJobShorterThanTheIntervalOrTurnedOffPrintsNothing() {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setErr(e);
            try (Progress p = Progress.start("quick", 4096, new ProgressOptions(true, Duration.ofSeconds(10)))) {
                p.add(4096);
            }
            try (Progress p = Progress.start("off", 4096, new ProgressOptions(false, Duration.ZERO))) {
                p.add(1024);
                p.add(3072);
            }
        } finally {
            System.setErr(saved);
        }
        assertEquals("", err.toString(StandardCharsets.UTF_8));
    }
}
