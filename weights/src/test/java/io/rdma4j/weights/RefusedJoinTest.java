package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferTimeoutException;
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
 * A subscriber whose join the publisher could not admit joins again: the publisher's backend (a fault injector) holds
 * every lane's completions, so its read of the subscriber's wishes runs past the deadline and the join is refused, as
 * on a machine too loaded to answer in time, or for a subscriber whose join came before it was back in the directory.
 * Once the lanes run again the subscriber, told to join again, is admitted and gets the next version byte for byte.
 * Before, a refused subscriber was never told anything and waited for a version that never came.
 */
class RefusedJoinTest {
    @Test
    void aSubscriberWhoseJoinWasRefusedJoinsAgain() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        FaultInjectingBackend[] faults = new FaultInjectingBackend[1];
        List<TransferEngine> engines = new ArrayList<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared()) {
            try {
                engines.add(SyncFixture.faultyEngine("trainer-0", dir.target(), faults));
                List<List<MemorySegment>> parts = new ArrayList<>();
                WeightPublisher pub = SyncFixture.publishers(engines, arena, parts, Duration.ofMillis(1500))
                        .getFirst();
                int lanes = faults[0].lanes().size();
                for (int l = 0; l < lanes; l++) {
                    faults[0].hold(l);
                }
                TransferEngine rollout = SyncFixture.engine("rollout-a", dir.target());
                engines.add(rollout);
                try (WeightSubscriber sub =
                        WeightSubscriber.builder(rollout, List.of("trainer-0")).build()) {
                    TransferTimeoutException refused = assertThrows(
                            TransferTimeoutException.class, () -> pub.awaitSubscribers(1, Duration.ofSeconds(4)));
                    assertTrue(refused.getMessage().contains("rollout-a=could not join"), refused.getMessage());
                    for (int l = 0; l < lanes; l++) {
                        faults[0].release(l);
                    }
                    assertEquals(List.of("rollout-a"), pub.awaitSubscribers(1, Duration.ofSeconds(30)));
                    SyncFixture.fillAll(parts, 1);
                    PublishResult r = pub.publish(1);
                    assertEquals(1, r.synced(), r.toString());
                    try (WeightSubscriber.Lease lease = sub.awaitVersion(1, Duration.ofSeconds(20))) {
                        for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                            Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                            assertEquals(-1, SyncFixture.check(x.host(), 1, t, Shard.FULL), x.name());
                        }
                    }
                }
                pub.close();
            } finally {
                engines.forEach(TransferEngine::close);
            }
        }
    }
}
