package io.rdma4j.rendezvous.etcd;

import io.rdma4j.Closeables;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * etcd members on loopback, each a real {@code etcd} process with its own data directory and free ports: for tests,
 * benchmarks and failover runs on one machine. Not for production, where etcd is run by its own tooling.
 */
public final class LocalEtcdCluster implements AutoCloseable {
    /** Where Debian's {@code etcd-server} package puts the binary. */
    public static final Path ETCD = Path.of("/usr/bin/etcd");

    private final Path dir;
    private final int[] clientPorts;
    private final int[] peerPorts;
    private final Process[] members;
    private final String initialCluster;

    private LocalEtcdCluster(Path dir, int size) {
        this.dir = dir;
        this.clientPorts = new int[size];
        this.peerPorts = new int[size];
        this.members = new Process[size];
        List<String> initial = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            clientPorts[i] = freePort();
            peerPorts[i] = freePort();
            initial.add("m" + i + "=http://127.0.0.1:" + peerPorts[i]);
        }
        this.initialCluster = String.join(",", initial);
    }

    /** @return null when etcd can be started here, otherwise what to install */
    public static String unavailabilityCause() {
        return Files.isExecutable(ETCD)
                ? null
                : ETCD + " not found: install it with apt-get install etcd-server (./rdma4j test does)";
    }

    /** Starts {@code size} members under {@code dir} and waits until each reports healthy. */
    public static LocalEtcdCluster start(Path dir, int size) {
        String missing = unavailabilityCause();
        if (missing != null) {
            throw new IllegalStateException(missing);
        }
        LocalEtcdCluster c = new LocalEtcdCluster(dir, size);
        try {
            for (int i = 0; i < size; i++) {
                c.launch(i, "new");
            }
            for (int i = 0; i < size; i++) {
                c.awaitHealthy(i);
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    private void launch(int i, String state) {
        Path data = dir.resolve("m" + i);
        String client = "http://127.0.0.1:" + clientPorts[i];
        String peer = "http://127.0.0.1:" + peerPorts[i];
        // a short election timeout makes a lost member's leader re-elected quickly; etcd's minimum lease TTL is 1.5 x
        // it
        List<String> cmd = List.of(
                ETCD.toString(),
                "--name=m" + i,
                "--data-dir=" + data,
                "--listen-client-urls=" + client,
                "--advertise-client-urls=" + client,
                "--listen-peer-urls=" + peer,
                "--initial-advertise-peer-urls=" + peer,
                "--initial-cluster=" + initialCluster,
                "--initial-cluster-state=" + state,
                "--initial-cluster-token=rdma4j-" + dir.getFileName(),
                "--heartbeat-interval=50",
                "--election-timeout=500",
                "--logger=zap",
                "--log-level=error");
        try {
            Files.createDirectories(dir);
            members[i] = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            dir.resolve("m" + i + ".log").toFile()))
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + ETCD + ": " + e.getMessage(), e);
        }
    }

    private void awaitHealthy(int i) {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + clientPorts[i] + "/health"))
                .timeout(Duration.ofSeconds(1))
                .build();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() - deadline < 0) {
            if (!members[i].isAlive()) {
                throw new IllegalStateException("etcd member m" + i + " exited with " + members[i].exitValue()
                        + "; see " + dir.resolve("m" + i + ".log"));
            }
            try {
                if (http.send(req, HttpResponse.BodyHandlers.ofString()).body().contains("\"true\"")) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for etcd", e);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for etcd", e);
            }
        }
        throw new IllegalStateException(
                "etcd member m" + i + " not healthy within 30 s; see " + dir.resolve("m" + i + ".log"));
    }

    /** @return {@code etcd://127.0.0.1:PORT,...} of every member */
    public String url() {
        List<String> eps = new ArrayList<>();
        for (int p : clientPorts) {
            eps.add("127.0.0.1:" + p);
        }
        return "etcd://" + String.join(",", eps);
    }

    /** @return members, running or not */
    public int size() {
        return members.length;
    }

    /** Kills member {@code i} with SIGKILL, as a machine loss would, and waits for it to die. */
    public void kill(int i) throws InterruptedException {
        members[i].destroyForcibly().waitFor();
    }

    /** Stops member {@code i} (SIGSTOP): it holds its ports and answers nothing, as a partitioned machine would. */
    public void pause(int i) throws IOException, InterruptedException {
        signal(i, "STOP");
    }

    /** Lets a paused member run again (SIGCONT). */
    public void resume(int i) throws IOException, InterruptedException {
        signal(i, "CONT");
    }

    private void signal(int i, String sig) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + sig, Long.toString(members[i].pid()))
                .inheritIO()
                .start()
                .waitFor();
    }

    /** Restarts a killed member on its data directory and waits until it is healthy. */
    public void restart(int i) {
        launch(i, "existing");
        awaitHealthy(i);
    }

    /** Kills every member and deletes the data directories. Idempotent. */
    @Override
    public void close() {
        List<AutoCloseable> steps = new ArrayList<>();
        for (Process p : members) {
            if (p != null) {
                steps.add(() -> {
                    p.destroyForcibly().waitFor();
                });
            }
        }
        steps.add(() -> {
            if (Files.exists(dir)) {
                try (Stream<Path> s = Files.walk(dir)) {
                    for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
            }
        });
        Closeables.closeAll(steps);
    }
}
