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
import org.junit.jupiter.api.Test;

/**
 * A rank's plan announced after its data: on an engine with several lanes the plan and the pieces after it travel on
 * different lanes, and the subscriber's thread, polling the lanes in turn, can take pieces before the plan. Here the
 * subscriber's backend delivers every announcement of the first version newest first, so the plan comes last. The
 * pieces must still count: the version completes without the publisher resending anything. Before, they were stale, and
 * the version completed only when the publisher's repair round resent them (or, when the resent pieces overtook their
 * plan again, not before the publisher's deadline failed the subscriber).
 */
class PlanOvertakenTest {
    @Test
    void piecesThatOvertookTheirPlanCountWhenItComes() throws Exception {
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
                TransferEngine rollout = SyncFixture.faultyEngine("rollout-a", dir.target(), faults);
                engines.add(rollout);
                try (WeightSubscriber sub =
                        WeightSubscriber.builder(rollout, List.of("trainer-0")).build()) {
                    pub.awaitSubscribers(1, Duration.ofSeconds(30));
                    SyncFixture.fillAll(parts, 1);
                    // the publisher waits at least 500 ms for a confirmation before it resends: well after this
                    faults[0].reverseImmediates(Duration.ofMillis(50));
                    PublishResult r = pub.publish(1);
                    assertTrue(
                            faults[0].reversedImmediates() > 2,
                            "the plan and its pieces were not delivered newest first: this test tests nothing");
                    assertEquals(1, r.synced(), r.toString());
                    assertEquals(List.of(), r.resent(), "pieces that came before their plan were lost: " + r);
                    try (WeightSubscriber.Lease lease = sub.awaitVersion(1, Duration.ofSeconds(20))) {
                        for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                            Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                            assertEquals(-1, SyncFixture.check(x.host(), 1, t, Shard.FULL), x.name());
                        }
                    }
                    assertEquals(0, sub.staleNotifications());
                    // and the next version, with the plan known, as before
                    SyncFixture.fillAll(parts, 2);
                    PublishResult r2 = pub.publish(2);
                    assertEquals(1, r2.synced(), r2.toString());
                    assertEquals(List.of(), r2.resent(), r2.toString());
                }
                pub.close();
            } finally {
                engines.forEach(TransferEngine::close);
            }
        }
    }
}
