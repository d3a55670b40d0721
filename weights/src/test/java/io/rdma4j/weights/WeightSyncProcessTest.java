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
 * Trainer ranks in this JVM, rollout ranks in their own processes, over libfabric shm: TP 2 trainers to two full and
 * two TP 2 (other dimension: strided rows gathered at the ranks) subscribers, relayed, several versions each checked
 * byte for byte against the gathered reference; then a subscriber killed between versions, the others still syncing and
 * the publisher naming the dead one.
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
            List<List<MemorySegment>> parts = new ArrayList<>();
            List<WeightPublisher> pubs = SyncFixture.publishers(List.of(e0, e1), arena, parts);
            String from = "trainer-0,trainer-1";
            children.add(start(dir.target(), "rollout-a", from, "full", versions + 1));
            children.add(start(dir.target(), "rollout-b", from, "full", versions + 1));
            children.add(start(dir.target(), "rollout-c", from, "1:1:2", versions + 1));
            // c's and d's pieces are gathered by the ranks into one write each, and relayed as one write
            children.add(start(dir.target(), "rollout-d", from, "1:1:2", versions + 1));
            for (ChildProcess c : children) {
                assertEquals("JOINED", c.next());
            }
            // every subscriber's join has reached both ranks before the first version
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (WeightPublisher p : pubs) {
                while (p.subscribers().size() < 4 && System.nanoTime() < until) {
                    p.explain();
                    Thread.sleep(50);
                }
                assertEquals(4, p.subscribers().size(), p.explain());
            }
            String plan = pubs.get(0).explain();
            assertTrue(plan.contains("relayed by"), plan);
            assertTrue(plan.contains("(strided rows gathered), direct from trainer-0"), plan);
            for (long v = 1; v <= versions + 1; v++) {
                if (v == versions + 1) {
                    children.get(1).process().destroyForcibly().waitFor();
                }
                SyncFixture.fillAll(parts, v);
                List<PublishResult> results = SyncFixture.publishAll(pubs, v);
                for (PublishResult res : results) {
                    if (v <= versions) {
                        assertEquals(4, res.synced(), res.toString());
                    } else {
                        assertEquals(3, res.synced(), res.toString());
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
