package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.TransferEngine;
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
 * Trainer ranks publish on their own schedules, and one may start a version after another finished: two ranks (TP 2,
 * dim 0) in this JVM and subscribers in it too, over libfabric shm, so that the test sees what landed. Rollout-a holds
 * the rows rank 1 holds (aligned: rank 0 has nothing for it); rollout-b holds half the columns (resharded: both ranks
 * write to it). A rank that has to resend a subscriber's pieces says so in its result, and in its bytes: a version that
 * needed no repair sends each byte once.
 */
class LateRankTest {
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    /**
     * Rank 1's pieces land before rank 0's plan, which is empty for rollout-a: that plan's arrival completes the
     * version. Before, rollout-a waited for a piece that never came, and rank 1 resent its pieces after its grace.
     */
    @Test
    void anEmptyPlanArrivingLastCompletesTheVersion() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (Sync s = new Sync("0:1:2")) {
            WeightSubscriber a = s.subs.getFirst();
            SyncFixture.fillAll(s.parts, 1);
            Future<PublishResult> r1 = s.pool.submit(() -> s.pubs.get(1).publish(1));
            // every byte rollout-a needs comes from rank 1: once they landed, rank 0 starts the version
            awaitLanded(a, 1, a.bytesPerVersion());
            Future<PublishResult> r0 = s.pool.submit(() -> s.pubs.get(0).publish(1));
            assertSentOnce(r0.get(), 0);
            assertSentOnce(r1.get(), a.bytesPerVersion());
            s.check(1);
            s.publishTogether(2, 0, a.bytesPerVersion());
        }
    }

    /**
     * Rank 0 starts version 2 long after rank 1 wrote it, so rank 1 resends rollout-b's pieces under a plan of its own.
     * The versions after go to both subscribers once again: before, rank 1 kept writing under the plan number rollout-b
     * had dropped, and resent every version after its grace.
     */
    @Test
    void theVersionAfterARepairIsSentOnce() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (Sync s = new Sync("0:1:2", "1:1:2")) {
            // rollout-a needs all of rank 1's part, rollout-b half of each rank's
            long rank0 = s.subs.get(1).bytesPerVersion() / 2;
            long rank1 = s.subs.get(0).bytesPerVersion() + rank0;
            s.publishTogether(1, rank0, rank1);
            SyncFixture.fillAll(s.parts, 2);
            Future<PublishResult> r1 = s.pool.submit(() -> s.pubs.get(1).publish(2));
            // past rank 1's grace (500 ms after its writes): rollout-b still waits for rank 0's pieces
            Thread.sleep(1500);
            Future<PublishResult> r0 = s.pool.submit(() -> s.pubs.get(0).publish(2));
            assertSentOnce(r0.get(), rank0);
            PublishResult late = r1.get();
            assertEquals(2, late.synced(), late.toString());
            assertEquals(List.of("rollout-b"), late.resent(), "this test needs a repair: " + late);
            assertTrue(late.publisherBytes() + late.relayedBytes() > rank1, late.toString());
            String why = late.outcomes().stream()
                    .filter(o -> o.subscriber().equals("rollout-b"))
                    .findFirst()
                    .orElseThrow()
                    .reason();
            assertTrue(why != null && why.contains("had not confirmed"), late.toString());
            s.check(2);
            for (long v = 3; v <= 4; v++) {
                s.publishTogether(v, rank0, rank1);
            }
        }
    }

    /**
     * Two trainer ranks (deadline 20 s) and one subscriber per part, named rollout-a, rollout-b..., all in this JVM and
     * joined to both ranks.
     */
    private static final class Sync implements AutoCloseable {
        final List<String> needs;
        final DirectoryServer dir = DirectoryServer.builder().port(0).start();
        final Arena arena = Arena.ofShared();
        final List<TransferEngine> engines = new ArrayList<>();
        final List<List<MemorySegment>> parts = new ArrayList<>();
        final List<WeightPublisher> pubs = new ArrayList<>();
        final List<WeightSubscriber> subs = new ArrayList<>();
        final ExecutorService pool = Executors.newFixedThreadPool(2);

        Sync(String... needs) throws Exception {
            this.needs = List.of(needs);
            try {
                engines.add(SyncFixture.engine("trainer-0", dir.target()));
                engines.add(SyncFixture.engine("trainer-1", dir.target()));
                pubs.addAll(SyncFixture.publishers(engines, arena, parts, DEADLINE));
                for (int i = 0; i < needs.length; i++) {
                    TransferEngine e = SyncFixture.engine("rollout-" + (char) ('a' + i), dir.target());
                    engines.add(e);
                    String part = needs[i];
                    subs.add(WeightSubscriber.builder(e, List.of("trainer-0", "trainer-1"))
                            .needs(n -> SubscriberProcess.need(part, n))
                            .build());
                }
                for (WeightPublisher p : pubs) {
                    p.awaitSubscribers(needs.length, Duration.ofSeconds(30));
                }
            } catch (Exception | Error e) {
                close();
                throw e;
            }
        }

        /**
         * Publishes {@code v} from both ranks at once; each must send every byte once, and every subscriber have it.
         */
        void publishTogether(long v, long rank0, long rank1) throws Exception {
            SyncFixture.fillAll(parts, v);
            List<PublishResult> results = SyncFixture.publishAll(pubs, v);
            assertSentOnce(results.get(0), rank0);
            assertSentOnce(results.get(1), rank1);
            check(v);
        }

        /** Every subscriber leases version {@code v}, whose bytes are the fixture's. */
        void check(long v) throws InterruptedException {
            for (int i = 0; i < subs.size(); i++) {
                try (WeightSubscriber.Lease lease = subs.get(i).awaitVersion(v, DEADLINE)) {
                    assertEquals(v, lease.version());
                    for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                        Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                        Shard need = SubscriberProcess.need(needs.get(i), x.name());
                        assertEquals(-1, SyncFixture.check(x.host(), v, t, need), x.name());
                    }
                }
            }
        }

        @Override
        public void close() {
            pool.shutdownNow();
            subs.forEach(WeightSubscriber::close);
            pubs.forEach(WeightPublisher::close);
            engines.forEach(TransferEngine::close);
            arena.close();
            dir.close();
        }
    }

    private static void assertSentOnce(PublishResult r, long bytes) {
        assertEquals(r.outcomes().size(), r.synced(), r.toString());
        assertEquals(List.of(), r.resent(), r.toString());
        assertEquals(bytes, r.publisherBytes() + r.relayedBytes(), "bytes sent or relayed, once each: " + r);
    }

    private static void awaitLanded(WeightSubscriber s, long version, long bytes) throws InterruptedException {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (s.versionLanding() < version || s.bytesLanded() < bytes) {
            assertTrue(System.nanoTime() < end, "version " + version + "'s " + bytes + " bytes did not land");
            Thread.sleep(1);
        }
    }
}
