package io.rdma4j.weights;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A JVM of this test's class path running {@code main}: its stdout lines in a queue, its stderr kept in a file so that
 * a child that exits early fails the test with what it said and its exit status, not a bare end of stream.
 */
record ChildProcess(String label, Process process, BlockingQueue<String> lines, PrintStream stdin, Path stderr) {
    private static final String EOF = "\u0000EOF";

    static ChildProcess start(String label, Class<?> main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile("rdma4j-" + label + "-", ".stderr");
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        pb.redirectError(err.toFile());
        Process p = pb.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().name("stdout-" + label).start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the process is gone; EOF below says so
            }
            lines.add(EOF);
        });
        return new ChildProcess(
                label, p, lines, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8), err);
    }

    /** {@return the child's next stdout line}, failing with its stderr if it ends or says nothing for 120 s */
    String next() throws InterruptedException {
        String l = lines.poll(120, TimeUnit.SECONDS);
        if (l == null) {
            throw new AssertionError(label + " said nothing for 120 s; its stderr:\n" + stderrTail());
        }
        if (l.equals(EOF)) {
            lines.add(EOF);
            boolean ended = process.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(label + " ended its output ("
                    + (ended ? "exit status " + process.exitValue() : "still running") + "); its stderr:\n"
                    + stderrTail());
        }
        return l;
    }

    /**
     * Ends the child: end of input lets it close its engine (which removes its shm regions), and one that has not
     * exited after 10 s is killed. Deletes its stderr file.
     */
    void stop() {
        stdin.close();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            process.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(stderr);
        } catch (IOException | InterruptedException e) {
            // best effort: a temp file left behind
        }
    }

    String stderrTail() {
        try {
            String s = Files.readString(stderr, StandardCharsets.UTF_8);
            return s.length() > 8000 ? "...\n" + s.substring(s.length() - 8000) : s;
        } catch (IOException e) {
            return "(stderr unreadable: " + e.getMessage() + ")";
        }
    }
}
