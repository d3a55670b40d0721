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
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine e0 = SyncFixture.engine("trainer-0", dir.target());
                TransferEngine e1 = SyncFixture.engine("trainer-1", dir.target());
                TransferEngine ea = SyncFixture.engine("rollout-a", dir.target());
                ExecutorService pool = Executors.newFixedThreadPool(2)) {
            List<List<MemorySegment>> parts = new ArrayList<>();
            List<WeightPublisher> pubs = SyncFixture.publishers(List.of(e0, e1), arena, parts, DEADLINE);
            WeightSubscriber a = subscriber(ea, "0:1:2");
            for (WeightPublisher p : pubs) {
                p.awaitSubscribers(1, Duration.ofSeconds(30));
            }
            SyncFixture.fillAll(parts, 1);
            Future<PublishResult> r1 = pool.submit(() -> pubs.get(1).publish(1));
            // every byte rollout-a needs comes from rank 1: once they landed, rank 0 starts the version
            awaitLanded(a, 1, a.bytesPerVersion());
            Future<PublishResult> r0 = pool.submit(() -> pubs.get(0).publish(1));
            assertSentOnce(r0.get(), 0);
            assertSentOnce(r1.get(), a.bytesPerVersion());
            check(a, "0:1:2", 1);
            publishTogether(pubs, parts, 2, List.of(a), List.of("0:1:2"), 0, a.bytesPerVersion());
            a.close();
            for (WeightPublisher p : pubs) {
                p.close();
            }
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
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine e0 = SyncFixture.engine("trainer-0", dir.target());
                TransferEngine e1 = SyncFixture.engine("trainer-1", dir.target());
                TransferEngine ea = SyncFixture.engine("rollout-a", dir.target());
                TransferEngine eb = SyncFixture.engine("rollout-b", dir.target());
                ExecutorService pool = Executors.newFixedThreadPool(2)) {
            List<List<MemorySegment>> parts = new ArrayList<>();
            List<WeightPublisher> pubs = SyncFixture.publishers(List.of(e0, e1), arena, parts, DEADLINE);
            WeightSubscriber a = subscriber(ea, "0:1:2");
            WeightSubscriber b = subscriber(eb, "1:1:2");
            for (WeightPublisher p : pubs) {
                p.awaitSubscribers(2, Duration.ofSeconds(30));
            }
            List<WeightSubscriber> subs = List.of(a, b);
            List<String> needs = List.of("0:1:2", "1:1:2");
            // rollout-a needs all of rank 1's part, rollout-b half of each rank's
            long rank0 = b.bytesPerVersion() / 2;
            long rank1 = a.bytesPerVersion() + b.bytesPerVersion() / 2;
            publishTogether(pubs, parts, 1, subs, needs, rank0, rank1);
            SyncFixture.fillAll(parts, 2);
            Future<PublishResult> r1 = pool.submit(() -> pubs.get(1).publish(2));
            // past rank 1's grace (500 ms after its writes): rollout-b still waits for rank 0's pieces
            Thread.sleep(1500);
            Future<PublishResult> r0 = pool.submit(() -> pubs.get(0).publish(2));
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
            for (int i = 0; i < subs.size(); i++) {
                check(subs.get(i), needs.get(i), 2);
            }
            for (long v = 3; v <= 4; v++) {
                publishTogether(pubs, parts, v, subs, needs, rank0, rank1);
            }
            a.close();
            b.close();
            for (WeightPublisher p : pubs) {
                p.close();
            }
        }
    }

    private static WeightSubscriber subscriber(TransferEngine engine, String part) {
        return WeightSubscriber.builder(engine, List.of("trainer-0", "trainer-1"))
                .needs(n -> SubscriberProcess.need(part, n))
                .build();
    }

    /** Publishes {@code v} from both ranks at once; each must send every byte once, and every subscriber have it. */
    private static void publishTogether(
            List<WeightPublisher> pubs,
            List<List<MemorySegment>> parts,
            long v,
            List<WeightSubscriber> subs,
            List<String> needs,
            long rank0,
            long rank1)
            throws Exception {
        SyncFixture.fillAll(parts, v);
        List<PublishResult> results = SyncFixture.publishAll(pubs, v);
        assertSentOnce(results.get(0), rank0);
        assertSentOnce(results.get(1), rank1);
        for (int i = 0; i < subs.size(); i++) {
            check(subs.get(i), needs.get(i), v);
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

    private static void check(WeightSubscriber s, String part, long v) throws InterruptedException {
        try (WeightSubscriber.Lease lease = s.awaitVersion(v, DEADLINE)) {
            assertEquals(v, lease.version());
            for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                Tensor x = lease.tensors().get(SyncFixture.NAMES[t]);
                assertEquals(-1, SyncFixture.check(x.host(), v, t, SubscriberProcess.need(part, x.name())), x.name());
            }
        }
    }
}
