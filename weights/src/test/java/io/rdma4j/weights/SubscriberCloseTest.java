package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * A subscriber that closes as soon as it has its version (the command line's {@code weights subscribe} does) must not
 * take its confirmation down with it: the publisher would count a subscriber that has every byte as failed. One trainer
 * rank and one subscriber in this JVM over libfabric shm; the subscriber's backend refuses its posts for a while, as a
 * loaded machine delays them.
 */
class SubscriberCloseTest {
    /** Longer than the subscriber once waited for its control writes at close, shorter than their deadline. */
    private static final Duration REFUSED = Duration.ofSeconds(3);

    @Test
    void aConfirmationStillOnItsWayAtCloseReachesThePublisher() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        FaultInjectingBackend[] faults = new FaultInjectingBackend[1];
        List<TransferEngine> engines = new ArrayList<>();
        List<List<MemorySegment>> parts = new ArrayList<>();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared()) {
            try {
                engines.add(SyncFixture.engine("trainer-0", dir.target()));
                WeightPublisher pub = SyncFixture.publishers(engines, arena, parts, Duration.ofSeconds(15))
                        .getFirst();
                TransferEngine rollout = SyncFixture.faultyEngine("rollout-a", dir.target(), faults);
                engines.add(rollout);
                WeightSubscriber sub =
                        WeightSubscriber.builder(rollout, List.of("trainer-0")).build();
                pub.awaitSubscribers(1, Duration.ofSeconds(30));
                SyncFixture.fillAll(parts, 1);
                faults[0].backPressure(REFUSED);
                Future<PublishResult> published = pool.submit(() -> pub.publish(1));
                try (WeightSubscriber.Lease lease = sub.awaitVersion(1, Duration.ofSeconds(20))) {
                    for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                        Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                        assertEquals(-1, SyncFixture.check(x.host(), 1, t, Shard.FULL), x.name());
                    }
                }
                sub.close();
                assertTrue(
                        faults[0].backPressuredPosts() > 0,
                        "the confirmation was never held back: this test tests nothing");
                rollout.close();
                PublishResult r = published.get();
                assertEquals(1, r.synced(), r.toString());
                pub.close();
            } finally {
                pool.shutdownNow();
                engines.forEach(TransferEngine::close);
            }
        }
    }
}
