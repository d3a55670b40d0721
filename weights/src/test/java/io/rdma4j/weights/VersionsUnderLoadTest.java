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
 * Versions published back to back, never waiting for the rollout ranks, while those ranks (own processes, relayed and
 * resharded) lease the newest version, check it, hold it for a while and check it again: no lease may ever show a mix
 * of versions or change under its holder, and every rank ends on the last version.
 */
class VersionsUnderLoadTest {
    @Test
    void noLeaseEverSeesAMixOfVersions() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        int versions = 30;
        // name, part, milliseconds each lease is held
        String[][] ranks = {{"rollout-a", "full", "0"}, {"rollout-b", "full", "25"}, {"rollout-c", "1:1:2", "10"}};
        List<ChildProcess> children = new ArrayList<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine e0 = SyncFixture.engine("trainer-0", dir.target());
                TransferEngine e1 = SyncFixture.engine("trainer-1", dir.target())) {
            List<List<MemorySegment>> parts = new ArrayList<>();
            List<WeightPublisher> pubs = SyncFixture.publishers(List.of(e0, e1), arena, parts);
            for (String[] r : ranks) {
                children.add(ChildProcess.start(
                        r[0],
                        SubscriberProcess.class,
                        dir.target(),
                        r[0],
                        "trainer-0,trainer-1",
                        r[1],
                        Integer.toString(versions),
                        r[2]));
            }
            for (ChildProcess c : children) {
                assertEquals("JOINED", c.next());
            }
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (WeightPublisher p : pubs) {
                while (p.subscribers().size() < ranks.length && System.nanoTime() < until) {
                    p.explain(); // admits the joins that arrived
                    Thread.sleep(50);
                }
                assertEquals(ranks.length, p.subscribers().size(), p.explain());
            }
            assertTrue(pubs.get(0).explain().contains("relayed by"), pubs.get(0).explain());
            for (long v = 1; v <= versions; v++) {
                SyncFixture.fillAll(parts, v);
                for (PublishResult res : SyncFixture.publishAll(pubs, v)) {
                    // a rank holding its lease makes the publisher wait for the buffer, never skip or fail it
                    assertEquals(ranks.length, res.synced(), "version " + v + ": " + res);
                }
            }
            for (int c = 0; c < children.size(); c++) {
                long last = 0;
                int leases = 0;
                while (last < versions) {
                    String line = children.get(c).next();
                    assertTrue(line.startsWith("OK "), ranks[c][0] + ": " + line);
                    long v = Long.parseLong(line.substring(3));
                    assertTrue(v > last, ranks[c][0] + " leased version " + v + " after " + last);
                    last = v;
                    leases++;
                }
                assertEquals(versions, last, ranks[c][0]);
                assertTrue(leases > 1, ranks[c][0] + " leased only " + leases + " versions");
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
