package io.rdma4j.perf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * libfabric's own C benchmark, {@code fi_rma_bw -o writedata} from fabtests, run as a server and a client process on
 * this machine: the C baseline of the write benchmarks. The binaries are not part of the project;
 * {@code RDMA4J_FABTESTS=DIR} names a fabtests build (DIR or DIR/bin holds {@code fi_rma_bw}), e.g. one configured from
 * a libfabric release's {@code fabtests/} with {@code --with-libfabric=/usr}.
 *
 * <p>Flags that work with libfabric 1.17: shm exchanges addresses out of band ({@code -E=PORT}) and each side needs its
 * own {@code -B} port; the tcp server binds {@code -s 127.0.0.1 -B PORT} and the client dials {@code -P PORT}. A wrong
 * flag leaves both processes spinning, so each run has a time limit and is killed past it.
 */
final class Fabtests {
    private static final Pattern MB_PER_SEC = Pattern.compile("MB/sec: ([0-9.]+)");
    private static final long RUN_LIMIT_SECONDS = 60;

    private final Path binary;
    private int nextPort = 9200 + (int) (ProcessHandle.current().pid() % 500) * 4;

    private Fabtests(Path binary) {
        this.binary = binary;
    }

    /** {@return the fabtests named by RDMA4J_FABTESTS, or empty when it is unset} */
    static Optional<Fabtests> fromEnvironment() {
        String dir = System.getenv("RDMA4J_FABTESTS");
        return dir == null || dir.isBlank() ? Optional.empty() : Optional.of(in(Path.of(dir)));
    }

    /** {@return the fabtests build in {@code dir}} @throws IllegalArgumentException when it holds no fi_rma_bw */
    static Fabtests in(Path dir) {
        for (Path p : List.of(dir.resolve("fi_rma_bw"), dir.resolve("bin").resolve("fi_rma_bw"))) {
            if (Files.isExecutable(p)) {
                return new Fabtests(p);
            }
        }
        throw new IllegalArgumentException(
                "RDMA4J_FABTESTS=" + dir + " holds no executable fi_rma_bw (nor bin/fi_rma_bw):"
                        + " point it at a fabtests build, or unset it to run without the C baseline");
    }

    Path binary() {
        return binary;
    }

    /**
     * {@return the best GB/s of {@code rounds} runs of {@link #writeGigabytesPerSecond}}: the engine's side of a bench
     * keeps its best of as many runs, so C gets the same chance at a quiet moment of a shared machine
     */
    double bestWriteGigabytesPerSecond(String provider, long size, int window, long iterations, int rounds)
            throws IOException, InterruptedException {
        double best = 0;
        for (int i = 0; i < rounds; i++) {
            best = Math.max(best, writeGigabytesPerSecond(provider, size, window, iterations));
        }
        return best;
    }

    /**
     * {@return GB/s of fi_rma_bw -o writedata at {@code size} bytes, {@code window} writes in flight, as the client
     * reports it}
     *
     * @throws IOException when either process fails, says no rate, or runs past its limit (the message says which)
     */
    double writeGigabytesPerSecond(String provider, long size, int window, long iterations)
            throws IOException, InterruptedException {
        String prov = provider.startsWith("tcp") ? "tcp" : provider;
        int port = nextPort;
        nextPort += 3;
        List<String> common = List.of(
                binary.toString(),
                "-p",
                prov,
                "-o",
                "writedata",
                "-S",
                Long.toString(size),
                "-W",
                Integer.toString(window),
                "-I",
                Long.toString(iterations),
                "-m");
        List<String> server = new ArrayList<>(common);
        List<String> client = new ArrayList<>(common);
        if (prov.equals("shm")) {
            server.addAll(List.of("-E=" + port, "-B", Integer.toString(port + 1)));
            client.addAll(List.of("-E=" + port, "-B", Integer.toString(port + 2), "127.0.0.1"));
        } else {
            server.addAll(List.of("-s", "127.0.0.1", "-B", Integer.toString(port)));
            client.addAll(List.of("-P", Integer.toString(port), "127.0.0.1"));
        }
        Path serverOut = Files.createTempFile("rdma4j-fi_rma_bw-server-", ".out");
        Path clientOut = Files.createTempFile("rdma4j-fi_rma_bw-client-", ".out");
        Process s = new ProcessBuilder(server)
                .redirectErrorStream(true)
                .redirectOutput(serverOut.toFile())
                .start();
        Process c = null;
        try {
            Thread.sleep(300); // the server listens before the client dials; fabtests has no readiness signal
            c = new ProcessBuilder(client)
                    .redirectErrorStream(true)
                    .redirectOutput(clientOut.toFile())
                    .start();
            boolean clientDone = c.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS);
            boolean serverDone = s.waitFor(clientDone ? 10 : 0, TimeUnit.SECONDS);
            String said = Files.readString(clientOut, StandardCharsets.UTF_8);
            if (!clientDone || !serverDone) {
                throw new IOException("fi_rma_bw " + prov + " " + size + " B ran past " + RUN_LIMIT_SECONDS
                        + " s and was killed (client: " + String.join(" ", client) + "); it said: " + said.strip());
            }
            Matcher m = MB_PER_SEC.matcher(said);
            if (c.exitValue() != 0 || !m.find()) {
                throw new IOException("fi_rma_bw " + prov + " " + size + " B exited " + c.exitValue()
                        + " without a rate; it said: " + said.strip() + "; the server said: "
                        + Files.readString(serverOut, StandardCharsets.UTF_8).strip());
            }
            return Double.parseDouble(m.group(1)) / 1000; // fabtests' MB is 10^6 bytes
        } finally {
            s.destroyForcibly();
            if (c != null) {
                c.destroyForcibly();
            }
            Files.deleteIfExists(serverOut);
            Files.deleteIfExists(clientOut);
        }
    }
}
