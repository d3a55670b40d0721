package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.etcd.LocalEtcdCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * {@code ./rdma4j demo --rendezvous A,B} with directory A gone before the demo starts: both processes fail over to B
 * (the same etcd holds the state) and the bytes arrive verified.
 */
class DemoFailoverTest {
    @Test
    void demoCompletesWhenTheFirstDirectoryIsGone() throws Exception {
        String missing = LocalEtcdCluster.unavailabilityCause();
        assumeTrue(missing == null, missing);
        Libfabric.ensureAvailable();
        try (LocalEtcdCluster etcd = LocalEtcdCluster.start(Files.createTempDirectory("rdma4j-demo-failover-"), 1);
                DirectoryServer b =
                        DirectoryServer.builder().port(0).store(etcd.url()).start()) {
            String a;
            try (DirectoryServer gone =
                    DirectoryServer.builder().port(0).store(etcd.url()).start()) {
                a = gone.target();
            }
            PrintStream saved = System.out;
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            int rc;
            try (PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
                System.setOut(capture);
                rc = new DemoCommand().run(new String[] {
                    "--size",
                    "8m",
                    "--chunk",
                    "1m",
                    "--lanes",
                    "2",
                    "--providers",
                    "shm",
                    "--rendezvous",
                    a + "," + b.target()
                });
            } finally {
                System.setOut(saved);
            }
            String out = buf.toString(StandardCharsets.UTF_8);
            assertEquals(0, rc, out);
            assertTrue(out.contains("every byte verified at the target"), out);
        }
    }
}
