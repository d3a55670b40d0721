package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.spi.FaultInjectingBackend;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A confirmation that never reached the publisher: the subscriber's engine (one lane, no retries) reports the write of
 * its confirmation of version 2 failed, which it holds whole. The publisher hears nothing, and its repair round resends
 * the version's pieces under a new plan; the subscriber must confirm again, and the version count as synced. Before,
 * the resent pieces of a version complete here were only counted stale, and the subscriber failed a version it had.
 */
class ConfirmationLostTest {
    @Test
    void aVersionResentAfterALostConfirmationIsConfirmedAgain() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        FaultInjectingBackend[] faults = new FaultInjectingBackend[1];
        List<TransferEngine> engines = new ArrayList<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared()) {
            try {
                engines.add(SyncFixture.engine("trainer-0", dir.target()));
                List<List<MemorySegment>> parts = new ArrayList<>();
                WeightPublisher pub = SyncFixture.publishers(engines, arena, parts, Duration.ofSeconds(20))
                        .getFirst();
                TransferEngine rollout = SyncFixture.builder("rollout-a", dir.target())
                        .lanesPerNic(1)
                        .maxRetries(0)
                        .backendWrapper(x -> faults[0] = new FaultInjectingBackend(x))
                        .build();
                engines.add(rollout);
                assertEquals(1, faults[0].lanes().size(), "the subscriber's engine has more than one lane");
                try (WeightSubscriber sub =
                        WeightSubscriber.builder(rollout, List.of("trainer-0")).build()) {
                    pub.awaitSubscribers(1, Duration.ofSeconds(30));
                    SyncFixture.fillAll(parts, 1);
                    PublishResult r1 = pub.publish(1);
                    assertEquals(1, r1.synced(), r1.toString());
                    // the subscriber's next write is its confirmation of version 2
                    faults[0].failCompletions(0, 1);
                    SyncFixture.fillAll(parts, 2);
                    PublishResult r2 = pub.publish(2);
                    assertEquals(1, faults[0].injectedFailures(), "no completion failed: this test tests nothing");
                    assertEquals(
                            1, sub.controlWriteFailures(), "the confirmation was not the write that failed: " + r2);
                    assertEquals(List.of("rollout-a"), r2.resent(), r2.toString());
                    assertEquals(1, r2.synced(), r2.toString());
                    try (WeightSubscriber.Lease lease = sub.awaitVersion(2, Duration.ofSeconds(20))) {
                        assertEquals(2, lease.version());
                        for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                            Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                            assertEquals(-1, SyncFixture.check(x.host(), 2, t, Shard.FULL), x.name());
                        }
                    }
                    // and the next version goes straight again
                    SyncFixture.fillAll(parts, 3);
                    PublishResult r3 = pub.publish(3);
                    assertEquals(1, r3.synced(), r3.toString());
                    assertEquals(List.of(), r3.resent(), r3.toString());
                }
                pub.close();
            } finally {
                engines.forEach(TransferEngine::close);
            }
        }
    }
}
