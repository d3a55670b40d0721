package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A drop notice that reaches a subscriber after the plan its rank made later: a refused join's notice still in the
 * fabric when the subscriber's next join was admitted and the new plan sent. Here the notice is written by hand from
 * the publisher's engine, numbered as one drawn before the plan, once the subscriber holds the plan. It is stale: the
 * subscriber keeps its plan and gets the next version straight. Before, it took the notice for a new drop, dropped the
 * plan and joined again (the test then fails on the stale count): a needless new plan, and a version under way at that
 * moment lost to it (here none is under way, and the next one still arrives).
 */
class StaleNoticeTest {
    @Test
    void aNoticeSentBeforeThePlanIsStale() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        List<TransferEngine> engines = new ArrayList<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared()) {
            try {
                TransferEngine trainer = SyncFixture.engine("trainer-0", dir.target());
                engines.add(trainer);
                List<List<MemorySegment>> parts = new ArrayList<>();
                WeightPublisher pub = SyncFixture.publishers(engines, arena, parts, Duration.ofSeconds(20))
                        .getFirst();
                TransferEngine rollout = SyncFixture.engine("rollout-a", dir.target());
                engines.add(rollout);
                try (WeightSubscriber sub = WeightSubscriber.builder(rollout, List.of("trainer-0"))
                                .build();
                        LocalBuffer from = trainer.register(arena.allocate(8, 8))) {
                    pub.awaitSubscribers(1, Duration.ofSeconds(30));
                    SyncFixture.fillAll(parts, 1);
                    assertEquals(1, pub.publish(1).synced());
                    sub.awaitVersion(1, Duration.ofSeconds(20)).close();
                    long stale = sub.staleNotifications();

                    // the notice drawn just before the plan the subscriber holds, arriving now
                    int before = pub.nextDropNotice() - 1;
                    trainer.write(
                                    from,
                                    0,
                                    trainer.peer(rollout.name()).buffer(WeightSubscriber.INBOX),
                                    WeightPublisher.INBOX_PER_RANK - 16,
                                    8,
                                    TransferOptions.tag(pub.dropNoticeTag(1, before)))
                            .future()
                            .get(10, TimeUnit.SECONDS);
                    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                    while (sub.staleNotifications() == stale && System.nanoTime() < end) {
                        Thread.sleep(10);
                    }
                    assertEquals(
                            stale + 1,
                            sub.staleNotifications(),
                            "the notice sent before the plan was taken for a new drop");

                    SyncFixture.fillAll(parts, 2);
                    PublishResult r = pub.publish(2);
                    assertEquals(1, r.synced(), r.toString());
                    assertEquals(List.of(), r.resent(), r.toString());
                    try (WeightSubscriber.Lease lease = sub.awaitVersion(2, Duration.ofSeconds(20))) {
                        for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                            Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                            assertEquals(-1, SyncFixture.check(x.host(), 2, t, Shard.FULL), x.name());
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
