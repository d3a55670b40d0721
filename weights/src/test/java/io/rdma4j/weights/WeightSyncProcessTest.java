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
import org.junit.jupiter.api.Test;

/**
 * Trainer ranks in this JVM, rollout ranks in their own processes, over libfabric shm: TP 2 trainers to full and TP 2
 * (other dimension) subscribers, relayed, several versions each checked byte for byte against the gathered reference;
 * then a subscriber killed between versions, the others still syncing and the publisher naming the dead one.
 */
class WeightSyncProcessTest {
    static ChildProcess start(String directory, String name, String publishers, String part, long last)
            throws Exception {
        return ChildProcess.start(
                name, SubscriberProcess.class, directory, name, publishers, part, Long.toString(last));
    }

    @Test
    void reshardsRelaysVersionsAndSurvivesAKilledSubscriber() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        int versions = 4;
        List<ChildProcess> children = new ArrayList<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine e0 = SyncFixture.engine("trainer-0", dir.target());
                TransferEngine e1 = SyncFixture.engine("trainer-1", dir.target())) {
            List<TransferEngine> engines = List.of(e0, e1);
            List<List<MemorySegment>> parts = new ArrayList<>();
            List<WeightPublisher> pubs = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                List<Tensor> ts = new ArrayList<>();
                List<MemorySegment> ms = new ArrayList<>();
                for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                    Shard held = Shard.split(0, SyncFixture.SHAPES[t][0], r, 2);
                    long bytes = Tensor.byteSize(SyncFixture.TYPES[t], held.shape(SyncFixture.SHAPES[t]));
                    MemorySegment m = arena.allocate(bytes, 4096);
                    ms.add(m);
                    ts.add(Tensor.host(
                            SyncFixture.NAMES[t], SyncFixture.TYPES[t], held.shape(SyncFixture.SHAPES[t]), m));
                }
                parts.add(ms);
                WeightPublisherBuilder b = WeightPublisher.builder(
                                engines.get(r), new TensorSet(ts, java.util.Map.of()))
                        .rank(r)
                        .chunkSize(16 << 10)
                        .crc32c(r == 0)
                        .deadline(Duration.ofSeconds(20))
                        .shards(n -> Shard.split(
                                0, SyncFixture.SHAPES[List.of(SyncFixture.NAMES).indexOf(n)][0], rank, 2));
                for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                    b.fullShape(SyncFixture.NAMES[t], SyncFixture.SHAPES[t]);
                }
                pubs.add(b.build());
            }
            String from = "trainer-0,trainer-1";
            children.add(start(dir.target(), "rollout-a", from, "full", versions + 1));
            children.add(start(dir.target(), "rollout-b", from, "full", versions + 1));
            children.add(start(dir.target(), "rollout-c", from, "1:1:2", versions + 1));
            for (ChildProcess c : children) {
                assertEquals("JOINED", c.next());
            }
            // every subscriber's join has reached both ranks before the first version
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (WeightPublisher p : pubs) {
                while (p.subscribers().size() < 3 && System.nanoTime() < until) {
                    p.explain();
                    Thread.sleep(50);
                }
                assertEquals(3, p.subscribers().size(), p.explain());
            }
            String plan = pubs.get(0).explain();
            assertTrue(plan.contains("relayed by"), plan);
            for (long v = 1; v <= versions + 1; v++) {
                if (v == versions + 1) {
                    children.get(1).process().destroyForcibly().waitFor();
                }
                for (int r = 0; r < 2; r++) {
                    for (int t = 0; t < SyncFixture.NAMES.length; t++) {
                        SyncFixture.fill(parts.get(r).get(t), v, t, Shard.split(0, SyncFixture.SHAPES[t][0], r, 2));
                    }
                }
                // each trainer rank publishes on its own thread, as each would in its own process
                long version = v;
                List<java.util.concurrent.Future<PublishResult>> running = new ArrayList<>();
                try (var pool = java.util.concurrent.Executors.newFixedThreadPool(pubs.size())) {
                    for (WeightPublisher p : pubs) {
                        running.add(pool.submit(() -> p.publish(version)));
                    }
                }
                List<PublishResult> results = new ArrayList<>();
                for (var f : running) {
                    results.add(f.get());
                }
                for (PublishResult res : results) {
                    if (v <= versions) {
                        assertEquals(3, res.synced(), res.toString());
                    } else {
                        assertEquals(2, res.synced(), res.toString());
                        assertEquals("rollout-b", res.failed().getFirst().subscriber(), res.toString());
                    }
                }
                for (int c = 0; c < children.size(); c++) {
                    if (v <= versions || c != 1) {
                        assertEquals("OK " + v, children.get(c).next(), "subscriber " + c);
                    }
                }
            }
            for (WeightPublisher p : pubs) {
                p.close();
            }
        } finally {
            for (ChildProcess c : children) {
                c.stop();
            }
        }
    }
}
