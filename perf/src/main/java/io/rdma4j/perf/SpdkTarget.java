package io.rdma4j.perf;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * SPDK's userspace NVMe/TCP target, {@code nvmf_tgt}, started for one bench run: one subsystem with one malloc bdev
 * namespace (RAM, {@code blockSize} blocks) listening on 127.0.0.1:{@code port}, its reactor pinned to
 * {@code coreMask}, without hugepages or PCI. Its configuration is a JSON file given at start-up, so no RPC client is
 * needed. It busy-polls its core; closing it stops it.
 */
final class SpdkTarget implements AutoCloseable {
    static final String NQN = "nqn.2016-06.io.spdk:rdma4j-bench";
    private static final long START_LIMIT_MS = 60_000;

    private final Process process;
    private final Path config;
    private final Path output;
    private final int port;

    private SpdkTarget(Process process, Path config, Path output, int port) {
        this.process = process;
        this.config = config;
        this.output = output;
        this.port = port;
    }

    /**
     * Starts nvmf_tgt and returns once it accepts connections.
     *
     * @throws IOException when it exits or does not listen within a minute; the message carries what it printed
     */
    static SpdkTarget start(SpdkBuild build, int port, long megabytes, int blockSize, String coreMask)
            throws IOException, InterruptedException {
        Path config = Files.createTempFile("rdma4j-nvmf_tgt-", ".json");
        Path output = Files.createTempFile("rdma4j-nvmf_tgt-", ".out");
        Files.writeString(config, config(port, megabytes, blockSize), StandardCharsets.UTF_8);
        List<String> cmd = List.of(
                build.requireTarget().toString(),
                "-m",
                coreMask,
                "--no-huge",
                "-s",
                Long.toString(Math.max(1024, megabytes + 512)),
                "--no-pci",
                "-r",
                "/tmp/rdma4j-nvmf_tgt-" + ProcessHandle.current().pid() + ".sock",
                "--json",
                config.toString());
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        SpdkTarget t = new SpdkTarget(p, config, output, port);
        try {
            t.awaitListening(String.join(" ", cmd));
            return t;
        } catch (IOException | RuntimeException e) {
            t.close();
            throw e;
        }
    }

    int port() {
        return port;
    }

    private void awaitListening(String cmd) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + START_LIMIT_MS;
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("nvmf_tgt exited " + process.exitValue() + " before listening on 127.0.0.1:"
                        + port + " (" + cmd + "); it said: " + said());
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IOException("nvmf_tgt did not listen on 127.0.0.1:" + port + " within "
                            + START_LIMIT_MS / 1000 + " s (" + cmd + "); it said: " + said());
                }
                Thread.sleep(100);
            }
        }
    }

    private String said() throws IOException {
        String s = Files.readString(output, StandardCharsets.UTF_8).strip();
        return s.length() > 4000 ? "..." + s.substring(s.length() - 4000) : s;
    }

    /** The JSON configuration: a malloc bdev, the TCP transport, one subsystem exporting it on the port. */
    static String config(int port, long megabytes, int blockSize) {
        long blocks = (megabytes << 20) / blockSize;
        return """
                {"subsystems": [
                  {"subsystem": "bdev", "config": [
                    {"method": "bdev_malloc_create",
                     "params": {"name": "Malloc0", "num_blocks": %d, "block_size": %d}}]},
                  {"subsystem": "nvmf", "config": [
                    {"method": "nvmf_create_transport", "params": {"trtype": "TCP"}},
                    {"method": "nvmf_create_subsystem",
                     "params": {"nqn": "%s", "allow_any_host": true, "serial_number": "RDMA4J00000000000001",
                                "model_number": "rdma4j bench target"}},
                    {"method": "nvmf_subsystem_add_ns",
                     "params": {"nqn": "%s", "namespace": {"nsid": 1, "bdev_name": "Malloc0"}}},
                    {"method": "nvmf_subsystem_add_listener",
                     "params": {"nqn": "%s", "listen_address":
                       {"trtype": "TCP", "adrfam": "IPv4", "traddr": "127.0.0.1", "trsvcid": "%d"}}}]}
                ]}
                """.formatted(blocks, blockSize, NQN, NQN, NQN, port);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        Files.deleteIfExists(config);
        Files.deleteIfExists(output);
    }
}
