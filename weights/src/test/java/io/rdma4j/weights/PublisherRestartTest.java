package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A trainer process killed and started again under the same name: the subscriber (in this JVM) sees the new generation,
 * joins it, and takes the new publisher's next version byte for byte.
 */
class PublisherRestartTest {
    record Child(Process process, BlockingQueue<String> lines, PrintStream stdin) {
        String next() throws InterruptedException {
            String l = lines.poll(120, TimeUnit.SECONDS);
            assertNotNull(l, "the publisher process said nothing for 120 s");
            return l;
        }
    }

    static Child start(String directory, String name) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-cp",
                System.getProperty("java.class.path"),
                PublisherProcess.class.getName(),
                directory,
                name);
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (java.io.IOException e) {
                // gone
            }
            lines.add("EOF");
        });
        return new Child(p, lines, new PrintStream(p.getOutputStream(), true, StandardCharsets.UTF_8));
    }

    private static void expectVersion(WeightSubscriber sub, long v) throws InterruptedException {
        try (WeightSubscriber.Lease lease = sub.awaitVersion(v, Duration.ofSeconds(60))) {
            assertEquals(v, lease.version());
            for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                assertEquals(-1, SyncFixture.check(x.host(), v, t, Shard.FULL), x.name() + " of version " + v);
            }
        }
    }

    @Test
    void subscriberFollowsARestartedPublisher() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        String name = "restart-trainer-" + ProcessHandle.current().pid();
        Child first = null;
        Child second = null;
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start()) {
            first = start(dir.target(), name);
            try (TransferEngine engine = SyncFixture.engine("restart-rollout", dir.target());
                    WeightSubscriber sub = WeightSubscriber.builder(engine, java.util.List.of(name))
                            .build()) {
                assertEquals("READY", first.next());
                for (long v = 1; v <= 2; v++) {
                    first.stdin().println("PUBLISH " + v);
                    assertEquals("PUBLISHED " + v + " 1", first.next());
                    expectVersion(sub, v);
                }
                first.process().destroyForcibly().waitFor();
                // the successor: same name, new generation and epoch; the subscriber must notice and join it
                second = start(dir.target(), name);
                assertEquals("READY", second.next());
                second.stdin().println("PUBLISH 3");
                assertEquals("PUBLISHED 3 1", second.next());
                expectVersion(sub, 3);
                assertEquals(0, sub.checksumMismatches());
            }
        } finally {
            for (Child c : new Child[] {first, second}) {
                if (c != null) {
                    c.stdin().close();
                    c.process().destroyForcibly();
                }
            }
        }
    }
}
