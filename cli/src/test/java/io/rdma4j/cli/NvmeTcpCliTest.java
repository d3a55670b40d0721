package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.ScriptedTarget;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ./rdma4j nvme discover|identify|read|write|checkpoint|restore --tcp} end to end through the command line's
 * entry point ({@link Main#run}), against the scripted NVMe/TCP target of the nvmeof module's tests on loopback
 * (namespace 1 of 4 MiB in RAM, 512-byte blocks, MDTS 128 KiB, 4 KiB in-capsule data). The real kernel target is
 * {@code NvmeVolumeCliGuestTest}'s, in the test VM.
 */
class NvmeTcpCliTest {
    private static final int CAPACITY = 4 << 20;
    /** The host identity every run presents, so no test depends on the one kept in the user's configuration. */
    private static final List<String> HOST =
            List.of("--hostnqn", "nqn.2026-01.io.rdma4j:cli-test", "--hostid", "0b1c2d3e-4f50-4162-8374-8596a7b8c9d0");

    @TempDir
    Path dir;

    private ScriptedTarget target;
    private String tcp;

    /** What one run printed and returned. */
    record Run(int status, String out, String err) {}

    @BeforeEach
    void startTarget() throws IOException {
        target = new ScriptedTarget(CAPACITY);
        tcp = "127.0.0.1:" + target.target().port();
    }

    @AfterEach
    void stopTarget() throws IOException {
        target.close();
    }

    /** Runs {@code ./rdma4j nvme ARGS} in this JVM, capturing standard output and error. */
    private static Run nvme(String... args) {
        String[] full = new String[args.length + 1];
        full[0] = "nvme";
        System.arraycopy(args, 0, full, 1, args.length);
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setOut(o);
            System.setErr(e);
            status = Main.run(full);
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private String[] withHost(String... args) {
        String[] full = Arrays.copyOf(args, args.length + HOST.size());
        for (int i = 0; i < HOST.size(); i++) {
            full[args.length + i] = HOST.get(i);
        }
        return full;
    }

    private Run ok(String... args) {
        Run r = nvme(withHost(args));
        assertEquals(0, r.status(), () -> "nvme " + String.join(" ", args) + "\n" + r.out() + r.err());
        return r;
    }

    @Test
    void discoverPrintsOneLinePerDiscoveryLogEntry() {
        Run r = ok("discover", "--tcp", tcp);
        assertEquals(
                List.of(
                        "nqn.2014-08.org.nvmexpress.discovery tcp 127.0.0.1 4420",
                        ScriptedTarget.NQN + " tcp 127.0.0.1 4420"),
                r.out().lines().toList());
    }

    @Test
    void identifyPrintsModelSerialLimitsAndNamespaceSize() {
        Run r = ok("identify", "--tcp", tcp, "--nqn", ScriptedTarget.NQN, "--queues", "2");
        String out = r.out();
        assertTrue(out.contains(": rdma4j scripted peer, serial SCRIPTED0001,"), out);
        assertTrue(out.contains("subsystem " + ScriptedTarget.NQN + " at tcp://" + tcp), out);
        assertTrue(
                out.contains("MDTS 5 (max transfer 131072 bytes), 2 I/O queues of depth 128, in-capsule data 4096"
                        + " bytes, MAXH2CDATA 131072"),
                out);
        assertTrue(out.lines().anyMatch("namespace 1: 8192 blocks of 512 bytes (4.0 MiB), LBA format 0"::equals), out);
    }

    @ParameterizedTest(name = "digests {0}")
    @ValueSource(booleans = {false, true})
    void readReturnsWhatWriteStored(boolean digest) throws IOException {
        // 300,000 bytes: past the in-capsule limit (R2T) and MDTS (split), and not a whole number of blocks
        byte[] data = new byte[300_000];
        new SplittableRandom(digest ? 2 : 1).nextBytes(data);
        Path in = Files.write(dir.resolve("in.bin"), data);
        String[] extra = digest ? new String[] {"--digest"} : new String[0];
        Run w = ok(concat(
                new String[] {
                    "write",
                    "--tcp",
                    tcp,
                    "--nqn",
                    ScriptedTarget.NQN,
                    "--nsid",
                    "1",
                    "--lba",
                    "24",
                    "--in",
                    in.toString()
                },
                extra));
        int padded = 300_032;
        assertTrue(
                w.out()
                        .startsWith("wrote " + padded + " bytes (293.0 KiB) at namespace 1 LBA 24 (512-byte blocks)"
                                + " in "),
                w.out());
        assertTrue(
                w.out().contains("(the last block was padded with 32 zero bytes: " + in + " is 300000 bytes)"),
                w.out());
        assertArrayEquals(Arrays.copyOf(data, padded), target.stored(24 * 512, padded), "what reached the namespace");
        Path back = dir.resolve("back.bin");
        Run r = ok(concat(
                new String[] {
                    "read",
                    "--tcp",
                    tcp,
                    "--nqn",
                    ScriptedTarget.NQN,
                    "--nsid",
                    "1",
                    "--lba",
                    "24",
                    "--length",
                    String.valueOf(padded),
                    "--out",
                    back.toString()
                },
                extra));
        assertTrue(r.out().startsWith("read " + padded + " bytes"), r.out());
        assertArrayEquals(Arrays.copyOf(data, padded), Files.readAllBytes(back));
    }

    @Test
    void restoreGivesBackEveryCheckpointedFileWithItsChecksum() throws IOException {
        byte[] small = new byte[5000];
        byte[] large = new byte[200_000];
        new SplittableRandom(3).nextBytes(small);
        new SplittableRandom(4).nextBytes(large);
        Path a = Files.write(dir.resolve("small.bin"), small);
        Path b = Files.write(dir.resolve("large.bin"), large);
        Run c = ok(
                "checkpoint",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                "2048",
                a.toString(),
                b.toString());
        String smallCrc = crcOf(c.out(), "small.bin 5000 bytes crc32c ([0-9a-f]{8})$");
        String largeCrc = crcOf(c.out(), "large.bin 200000 bytes crc32c ([0-9a-f]{8})$");
        assertTrue(c.out().contains("checkpointed 205000 bytes"), c.out());
        Path restored = dir.resolve("restored");
        Run r = ok(
                "restore",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                "2048",
                "--out",
                restored.toString());
        assertEquals(smallCrc, crcOf(r.out(), "small.bin 5000 bytes crc32c ([0-9a-f]{8}) verified$"));
        assertEquals(largeCrc, crcOf(r.out(), "large.bin 200000 bytes crc32c ([0-9a-f]{8}) verified$"));
        assertArrayEquals(small, Files.readAllBytes(restored.resolve("small.bin")));
        assertArrayEquals(large, Files.readAllBytes(restored.resolve("large.bin")));
        // a restore from blocks where no checkpoint was written finds no manifest and says so
        Run none = nvme(withHost(
                "restore",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                "6000",
                "--out",
                dir.resolve("nothing").toString()));
        assertEquals(1, none.status(), none.out() + none.err());
        assertTrue(
                none.err().startsWith("rdma4j nvme: ")
                        && none.err().toLowerCase().contains("manifest"),
                none.err());
    }

    @Test
    void longJobsPrintPlainProgressLinesOnStderrWhenItIsNotATerminal() throws IOException {
        // 3.5 MiB goes in 56 pieces of 64 KiB; --progress-every 0 prints a line for each that moves the count
        byte[] data = new byte[7 << 19];
        new SplittableRandom(5).nextBytes(data);
        Path in = Files.write(dir.resolve("big.bin"), data);
        String[] write = {
            "write", "--tcp", tcp, "--nqn", ScriptedTarget.NQN, "--nsid", "1", "--lba", "0", "--in", in.toString()
        };
        Run quiet = ok(write);
        assertEquals("", quiet.err(), "a job shorter than the interval (10 s) prints no progress");
        Run w = ok(concat(write, new String[] {"--progress-every", "0"}));
        assertTrue(w.out().startsWith("wrote 3670016 bytes (3.5 MiB) at namespace 1 LBA 0"), w.out());
        assertProgress(w.err(), "nvme write", "3.5 MiB");
        Run r = ok(
                "read",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                "0",
                "--length",
                String.valueOf(data.length),
                "--out",
                dir.resolve("back.bin").toString(),
                "--progress-every",
                "0");
        assertTrue(r.out().startsWith("read 3670016 bytes"), r.out());
        assertProgress(r.err(), "nvme read", "3.5 MiB");
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("back.bin")));
        // a checkpoint's progress counts its data (padded to whole blocks), not its manifest
        Run c = ok(
                "checkpoint",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                "0",
                "--progress-every",
                "0",
                in.toString());
        assertEquals(
                List.of("big.bin 3670016 bytes crc32c ([0-9a-f]{8})"),
                c.out()
                        .lines()
                        .limit(1)
                        .map(l -> l.replaceAll("[0-9a-f]{8}$", "([0-9a-f]{8})"))
                        .toList());
        assertProgress(c.err(), "nvme checkpoint", "3.5 MiB");
        Run x = ok(
                "restore",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                "0",
                "--out",
                dir.resolve("restored").toString(),
                "--progress-every",
                "0");
        assertTrue(
                x.out().lines().anyMatch(l -> l.matches("big.bin 3670016 bytes crc32c [0-9a-f]{8} verified")), x.out());
        assertProgress(x.err(), "nvme restore", "3.5 MiB");
        assertArrayEquals(data, Files.readAllBytes(dir.resolve("restored").resolve("big.bin")));
        // --no-progress wins over the interval
        assertEquals(
                "",
                ok(concat(write, new String[] {"--progress-every", "0", "--no-progress"}))
                        .err());
    }

    /**
     * Every line of {@code err} is a progress line of {@code label}; the bytes done rise from line to line (never down:
     * two lines may round to the same tenth of a MiB), and the last line says 100% and how long it took.
     */
    private static void assertProgress(String err, String label, String total) {
        Pattern line = Pattern.compile("rdma4j " + label + ": ([0-9.]+) (B|KiB|MiB) of " + total
                + " \\((\\d+)%\\), [0-9.]+ [MG]B/s, (ETA \\d:\\d\\d:\\d\\d|in \\d:\\d\\d:\\d\\d)");
        List<String> lines = err.lines().toList();
        assertTrue(lines.size() >= 2, () -> "at least one line on the way and the last one:\n" + err);
        double first = -1;
        double before = -1;
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = line.matcher(lines.get(i));
            assertTrue(m.matches(), "not a progress line: " + lines.get(i));
            double bytes = Double.parseDouble(m.group(1))
                    * switch (m.group(2)) {
                        case "KiB" -> 1 << 10;
                        case "MiB" -> 1 << 20;
                        default -> 1;
                    };
            assertTrue(bytes >= before, () -> "the count went back:\n" + err);
            before = bytes;
            first = first < 0 ? bytes : first;
            boolean last = i == lines.size() - 1;
            assertEquals(last, m.group(3).equals("100"), () -> "only the last line is at 100%:\n" + err);
            assertEquals(last, m.group(4).startsWith("in "), () -> "the last line says how long it took:\n" + err);
        }
        assertTrue(before > first, () -> "the count rose:\n" + err);
    }

    @Test
    void badArgumentsAndRefusalsEndWithAClearMessage() throws IOException {
        Path f = dir.resolve("f.bin");
        // usage errors: caught before or after connecting, each names what to fix
        assertError(nvme("identify", "--tcp", tcp), "--nqn is required");
        assertError(
                nvme(
                        "read",
                        "--tcp",
                        tcp,
                        "--nqn",
                        ScriptedTarget.NQN,
                        "--nsid",
                        "1",
                        "--lba",
                        "x",
                        "--length",
                        "512",
                        "--out",
                        f.toString()),
                "--lba 'x' is not a number");
        assertError(nvme("frobnicate", "--tcp", tcp), "unknown verb 'frobnicate'");
        assertError(
                nvme("discover", "--tcp", tcp, "--rdma", tcp),
                "give either --tcp HOST:PORT or --rdma HOST:PORT, not both");
        assertError(
                nvme(withHost(
                        "read",
                        "--tcp",
                        tcp,
                        "--nqn",
                        ScriptedTarget.NQN,
                        "--nsid",
                        "1",
                        "--lba",
                        "0",
                        "--length",
                        "1000",
                        "--out",
                        f.toString())),
                "--length 1000 must be a positive multiple of the block size 512");
        assertError(
                nvme(withHost("checkpoint", "--tcp", tcp, "--nqn", ScriptedTarget.NQN, "--nsid", "1")),
                "checkpoint needs at least one FILE");
        // refusals by the target or the network: exit 1 with the reason
        Run wrongNqn = nvme(withHost("identify", "--tcp", tcp, "--nqn", "nqn.2026-01.io.rdma4j:nobody"));
        assertEquals(1, wrongNqn.status());
        assertTrue(
                wrongNqn.err().startsWith("rdma4j nvme: Connect(qid=0, subnqn=nqn.2026-01.io.rdma4j:nobody"),
                wrongNqn.err());
        Run beyond = nvme(withHost(
                "read",
                "--tcp",
                tcp,
                "--nqn",
                ScriptedTarget.NQN,
                "--nsid",
                "1",
                "--lba",
                String.valueOf(CAPACITY / 512),
                "--length",
                "512",
                "--out",
                f.toString()));
        assertEquals(1, beyond.status());
        assertTrue(beyond.err().contains("LBA Out of Range"), beyond.err());
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        Run refused = nvme(withHost("discover", "--tcp", "127.0.0.1:" + closed));
        assertEquals(1, refused.status());
        assertTrue(refused.err().startsWith("rdma4j nvme: cannot connect to NVMe/TCP target"), refused.err());
        // no verb at all: the usage, and the exit status for bad usage
        Run bare = nvme();
        assertEquals(2, bare.status());
        assertTrue(bare.out().startsWith("usage: ./rdma4j nvme VERB --tcp HOST[:PORT]"), bare.out());
    }

    /** Usage errors exit non-zero with one line on standard error that starts with the command and says what to fix. */
    private static void assertError(Run r, String says) {
        assertTrue(r.status() != 0, "exit status 0 for a usage error: " + r.out());
        assertTrue(r.err().startsWith("rdma4j nvme: " + says), r.err());
        assertEquals("", r.out(), "nothing on standard output");
    }

    private static String crcOf(String out, String regex) {
        Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(out);
        assertTrue(m.find(), "no line matching " + regex + " in\n" + out);
        return m.group(1);
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
