package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code ./rdma4j nvme checkpoint|restore --volume ...}: usage errors come before any connection. */
class NvmeVolumeCliTest {
    private static int run(String... args) throws Exception {
        return new NvmeCommand(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).run(args);
    }

    @Test
    void volumeNamesItsOwnNamespacesAndOnlyCheckpointsAndRestores() {
        String ns = "tcp://127.0.0.1:1/nqn.2026-01.io.rdma4j:none/1";
        IllegalArgumentException both = assertThrows(
                IllegalArgumentException.class,
                () -> run("checkpoint", "--volume", ns, "--tcp", "127.0.0.1:1", "--nqn", "x", "f"));
        assertTrue(both.getMessage().startsWith("--volume names its namespaces itself"), both.getMessage());
        IllegalArgumentException verb =
                assertThrows(IllegalArgumentException.class, () -> run("write", "--volume", ns, "--in", "f"));
        assertTrue(
                verb.getMessage().startsWith("--volume goes with checkpoint and restore, not write"),
                verb.getMessage());
        // the namespace parser is the engine's VolumeSpec: its bad arguments are rdma4j's
        io.rdma4j.InvalidArgumentException form = assertThrows(
                io.rdma4j.InvalidArgumentException.class,
                () -> run("restore", "--volume", "127.0.0.1:1/x/1", "--out", "d"));
        assertTrue(form.getMessage().contains("TRANSPORT://HOST[:PORT]/NQN/NSID"), form.getMessage());
    }
}
