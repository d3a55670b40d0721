package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A trainer process killed and started again under the same name: the subscriber (in this JVM) sees the new generation,
 * joins it, and takes the new publisher's next version byte for byte.
 */
class PublisherRestartTest {
    static ChildProcess start(String directory, String name) throws Exception {
        return ChildProcess.start(name, PublisherProcess.class, directory, name);
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
        ChildProcess first = null;
        ChildProcess second = null;
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
            for (ChildProcess c : new ChildProcess[] {first, second}) {
                if (c != null) {
                    c.stop();
                }
            }
        }
    }
}
