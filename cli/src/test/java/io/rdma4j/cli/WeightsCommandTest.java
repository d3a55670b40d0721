package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.weights.DType;
import io.rdma4j.weights.Safetensors;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.TensorSet;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ./rdma4j weights}: publish and subscribe as separate processes, the demo, and bad usage. */
class WeightsCommandTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    /** {@code ./rdma4j ARGS} as a process of this test's class path, its stdout lines in a queue. */
    record Cli(Process process, BlockingQueue<String> lines, Path stderr) {
        static Cli start(String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED",
                    "--sun-misc-unsafe-memory-access=allow",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Main.class.getName()));
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().put("IPATH_NO_BACKTRACE", "1");
            // kept in a file so that a process that ends early fails the test with what it said
            Path err = Files.createTempFile("rdma4j-weights-cli-", ".stderr");
            pb.redirectError(err.toFile());
            Process p = pb.start();
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (IOException e) {
                    // gone
                }
                lines.add("EOF");
            });
            return new Cli(p, lines, err);
        }

        /** {@return the next line starting with {@code prefix}, skipping others} */
        String until(String prefix) throws InterruptedException {
            while (true) {
                String l = lines.poll(120, TimeUnit.SECONDS);
                assertNotNull(l, "nothing said for 120 s while waiting for " + prefix + "; stderr:\n" + stderrText());
                if (l.equals("EOF")) {
                    boolean ended = process.waitFor(10, TimeUnit.SECONDS);
                    throw new AssertionError("exited (" + (ended ? "status " + process.exitValue() : "still running")
                            + ") before saying " + prefix + "; stderr:\n" + stderrText());
                }
                if (l.startsWith(prefix)) {
                    return l;
                }
            }
        }

        String stderrText() {
            try {
                String s = Files.readString(stderr, StandardCharsets.UTF_8);
                return s.length() > 8000 ? "...\n" + s.substring(s.length() - 8000) : s;
            } catch (IOException e) {
                return "(unreadable: " + e.getMessage() + ")";
            }
        }

        int exit() throws InterruptedException {
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "still running after 120 s");
            return process.exitValue();
        }
    }

    private static Tensor tensor(Arena arena, String name, DType dtype, long[] shape, int seed) {
        MemorySegment m =
                arena.allocate(Math.max(1, Tensor.byteSize(dtype, shape)), 8).asSlice(0, Tensor.byteSize(dtype, shape));
        for (long i = 0; i < m.byteSize(); i++) {
            m.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 131 + seed * 17 + (i >>> 8)));
        }
        return Tensor.host(name, dtype, shape, m);
    }

    @Test
    void subscribeProcessesWriteTheFileAPublishProcessServes(@TempDir Path dir) throws Exception {
        Path in = dir.resolve("model.safetensors");
        try (Arena arena = Arena.ofConfined()) {
            Safetensors.write(
                    in,
                    new TensorSet(
                            List.of(
                                    tensor(arena, "model.embed_tokens.weight", DType.BF16, new long[] {300, 128}, 1),
                                    tensor(arena, "model.layers.0.mlp.gate.weight", DType.F32, new long[] {64, 96}, 2),
                                    tensor(arena, "model.layers.0.ln.bias", DType.F16, new long[] {3, 5, 7}, 3),
                                    tensor(arena, "lm_head.scale", DType.F64, new long[] {}, 4),
                                    tensor(arena, "positions", DType.I64, new long[] {33}, 5),
                                    tensor(arena, "mask", DType.U8, new long[] {13}, 6)),
                            Map.of("format", "pt")));
        }
        String name = "weights-pub-" + ProcessHandle.current().pid();
        Cli pub = Cli.start("weights", "publish", "--safetensors", in.toString(), "--name", name, "--port", "0");
        try {
            String where = pub.until("rdma4j weights: rendezvous directory on ");
            String rendezvous = where.substring("rdma4j weights: rendezvous directory on ".length())
                    .split(" ")[0];
            assertTrue(pub.until("rdma4j weights: " + name + " publishes ").contains("6 tensor(s)"));
            // two subscribers, one after the other, both joining after version 1 was published: each is served
            for (int i = 0; i < 2; i++) {
                Path out = dir.resolve("got" + i + ".safetensors");
                List<String> args = new ArrayList<>(List.of(
                        "weights", "subscribe", "--from", name, "--rendezvous", rendezvous, "--out", out.toString()));
                if (i == 1) {
                    args.addAll(List.of("--progress-every", "0"));
                }
                Cli sub = Cli.start(args.toArray(String[]::new));
                String said = sub.until("rdma4j weights: version 1 from " + name);
                assertEquals(0, sub.exit(), said + "; stderr:\n" + sub.stderrText());
                // the progress lines (others, on what did not count or a lost control write, are for the failure
                // message below)
                List<String> progress = sub.stderrText()
                        .lines()
                        .filter(l -> l.startsWith("rdma4j weights subscribe: ") && l.contains("%)"))
                        .toList();
                if (i == 0) {
                    // lines every 10 s by default: a sync this short prints none
                    assertEquals(List.of(), progress, sub.stderrText());
                } else {
                    // at once: the wait at 0%, and the version's bytes at 100% at the end
                    assertTrue(progress.size() >= 2, sub.stderrText());
                    assertTrue(progress.getFirst().matches(".* of \\S+ \\S+ \\(0%\\), .*"), sub.stderrText());
                    assertTrue(
                            progress.getLast().matches(".*: (\\S+ \\S+) of \\1 \\(100%\\), .*, in .*"),
                            sub.stderrText());
                }
                String served = pub.until("  version 1 to weights-sub-");
                assertTrue(served.contains(": synced in "), served + "; the subscriber's stderr:\n" + sub.stderrText());
                assertSameTensors(in, out);
                try (Safetensors.MappedFile got = Safetensors.open(out)) {
                    Map<String, String> md = got.tensors().metadata();
                    assertEquals("pt", md.get("format"), "the publisher's __metadata__ travels: " + md);
                    assertEquals("1", md.get("rdma4j.version"), md.toString());
                }
            }
        } finally {
            pub.process().destroy();
            if (!pub.process().waitFor(20, TimeUnit.SECONDS)) {
                pub.process().destroyForcibly();
            }
        }
    }

    static void assertSameTensors(Path expected, Path actual) {
        try (Safetensors.MappedFile a = Safetensors.open(expected);
                Safetensors.MappedFile b = Safetensors.open(actual)) {
            List<String> names =
                    a.tensors().tensors().stream().map(Tensor::name).sorted().toList();
            assertEquals(
                    names,
                    b.tensors().tensors().stream().map(Tensor::name).sorted().toList());
            for (String n : names) {
                Tensor x = a.tensors().get(n);
                Tensor y = b.tensors().get(n);
                assertEquals(x.dtype(), y.dtype(), n);
                assertArrayEquals(x.shape(), y.shape(), n);
                assertEquals(-1, x.host().mismatch(y.host()), n + ": first differing byte");
            }
        }
    }

    @Test
    void demoWithTwoWorkersVerifiesEveryVersion() {
        Captured c =
                run("weights", "demo", "--workers", "2", "--versions", "2", "--size", "1m", "--progress-every", "0");
        assertEquals(0, c.rc(), c.out() + "\nstderr:\n" + c.err());
        for (int v = 1; v <= 2; v++) {
            assertTrue(c.out().contains("version " + v + ": "), c.out());
        }
        assertTrue(c.out().contains("every byte verified by all 2 worker(s)"), c.out());
        assertTrue(c.out().contains("half of dim 1 of each tensor (resharded"), c.out());
        assertTrue(c.out().contains("verified: 2 version(s) x 2 worker(s)"), c.out());
        // stderr is not a terminal here: a plain progress line per version (--progress-every 0), the last at 100%
        List<String> progress = c.err().lines().toList();
        assertEquals(2, progress.size(), c.err());
        assertTrue(
                progress.get(0).matches("rdma4j weights demo: \\S+ \\S+ of \\S+ \\S+ \\(50%\\), .*, ETA .*"), c.err());
        assertTrue(progress.get(1).matches("rdma4j weights demo: (\\S+ \\S+) of \\1 \\(100%\\), .*, in .*"), c.err());
    }

    @Test
    void badUsageSaysWhatIsWrongAndExitsTwo() {
        Captured missing = run("weights", "subscribe", "--out", "x.safetensors");
        assertEquals(2, missing.rc());
        assertTrue(missing.err().contains("subscribe needs --from"), missing.err());
        assertTrue(missing.err().contains("usage: ./rdma4j weights publish"), missing.err());
        Captured unknown = run("weights", "pull");
        assertEquals(2, unknown.rc());
        assertTrue(unknown.err().contains("unknown subcommand 'pull'"), unknown.err());
        Captured badNumber = run("weights", "demo", "--workers", "0");
        assertEquals(2, badNumber.rc());
        assertTrue(badNumber.err().contains("--workers must be between 1 and 16"), badNumber.err());
        Captured badInterval = run("weights", "demo", "--progress-every", "soon");
        assertEquals(2, badInterval.rc());
        assertTrue(badInterval.err().contains("--progress-every 'soon' is not a number"), badInterval.err());
        Captured noFile = run("weights", "publish", "--safetensors", "/nonexistent/m.safetensors", "--name", "p");
        assertEquals(1, noFile.rc());
        assertTrue(noFile.err().contains("no file /nonexistent/m.safetensors"), noFile.err());
    }

    record Captured(int rc, String out, String err) {}

    static Captured run(String... args) {
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setOut(o);
            System.setErr(e);
            rc = Main.run(args);
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
        return new Captured(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
