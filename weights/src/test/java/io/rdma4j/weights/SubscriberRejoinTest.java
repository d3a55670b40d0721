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
 * A live subscriber that fails a version rejoins: two trainer ranks in this JVM (deadline 1.5 s), two resharded,
 * double-buffered subscriber processes over libfabric shm (leases of 3 s). One is stopped (SIGSTOP) through a version,
 * which it then fails on both ranks while the other syncs; once it runs again it is told it was dropped and joins
 * again. The next version's buffer may hold its newest complete version, which it keeps serving: then it is skipped at
 * once (not waited for, so the other subscriber keeps its deadline), and the version after reaches both, byte for byte.
 * Then again with the subscriber stopped past its lease, so that the first notice cannot reach it and only a later one,
 * once it announced itself again, does.
 */
class SubscriberRejoinTest {
    private static final Duration DEADLINE = Duration.ofMillis(1500);

    @Test
    void aSubscriberThatFailedAVersionRejoins() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        List<ChildProcess> children = new ArrayList<>();
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine e0 = SyncFixture.engine("trainer-0", dir.target());
                TransferEngine e1 = SyncFixture.engine("trainer-1", dir.target())) {
            List<List<MemorySegment>> parts = new ArrayList<>();
            List<WeightPublisher> pubs = SyncFixture.publishers(List.of(e0, e1), arena, parts, DEADLINE);
            String from = "trainer-0,trainer-1";
            children.add(WeightSyncProcessTest.start(dir.target(), "rollout-a", from, "1:0:2", 7));
            children.add(WeightSyncProcessTest.start(dir.target(), "rollout-b", from, "1:1:2", 7));
            for (ChildProcess c : children) {
                assertEquals("JOINED", c.next());
            }
            for (WeightPublisher p : pubs) {
                p.awaitSubscribers(2, Duration.ofSeconds(30));
            }
            publish(pubs, parts, children, 1, false);
            // stopped within its lease: the first notice reaches it once it runs again
            failB(pubs, parts, children, 2, Duration.ZERO);
            publish(pubs, parts, children, 3, true);
            publish(pubs, parts, children, 4, false);
            // stopped past its lease (3 s): the first notice fails; a later one reaches it once it announced itself
            failB(pubs, parts, children, 5, Duration.ofSeconds(4));
            publish(pubs, parts, children, 6, true);
            publish(pubs, parts, children, 7, false);
            for (WeightPublisher p : pubs) {
                p.close();
            }
        } finally {
            for (ChildProcess c : children) {
                c.stop();
            }
        }
    }

    /** Publishes {@code v} with rollout-b stopped, and {@code more} longer after; only rollout-a gets it. */
    private static void failB(
            List<WeightPublisher> pubs,
            List<List<MemorySegment>> parts,
            List<ChildProcess> children,
            long v,
            Duration more)
            throws Exception {
        long b = children.get(1).process().pid();
        signal("STOP", b);
        try {
            SyncFixture.fillAll(parts, v);
            for (PublishResult r : SyncFixture.publishAll(pubs, v)) {
                assertEquals(1, r.synced(), r.toString());
                assertEquals(1, r.failed().size(), r.toString());
                assertEquals("rollout-b", r.failed().getFirst().subscriber(), r.toString());
            }
            Thread.sleep(more.toMillis());
        } finally {
            signal("CONT", b);
        }
        assertEquals("OK " + v, children.get(0).next());
        for (WeightPublisher p : pubs) {
            // dropped, told so, and joined again
            assertEquals(List.of("rollout-a", "rollout-b"), p.awaitSubscribers(2, Duration.ofSeconds(30)));
        }
    }

    /**
     * Publishes {@code v}; rollout-a syncs it, and so does rollout-b unless {@code mayBeSkipped} and its buffer for
     * {@code v} holds its newest complete version. Each checks every byte of what it leases.
     */
    private static void publish(
            List<WeightPublisher> pubs,
            List<List<MemorySegment>> parts,
            List<ChildProcess> children,
            long v,
            boolean mayBeSkipped)
            throws Exception {
        SyncFixture.fillAll(parts, v);
        boolean bGotIt = true;
        for (PublishResult r : SyncFixture.publishAll(pubs, v)) {
            PublishResult.Outcome b = r.outcomes().stream()
                    .filter(o -> o.subscriber().equals("rollout-b"))
                    .findFirst()
                    .orElseThrow();
            if (mayBeSkipped && b.status() == PublishResult.Status.SKIPPED) {
                assertTrue(b.reason().contains("holds its newest complete version"), r.toString());
                bGotIt = false;
            } else {
                assertEquals(2, r.synced(), r.toString());
            }
        }
        assertEquals("OK " + v, children.get(0).next());
        if (bGotIt) {
            // it may first say it completed the version it failed (every byte of it had landed when it ran again)
            while (true) {
                String line = children.get(1).next();
                assertTrue(line.startsWith("OK "), line);
                long k = Long.parseLong(line.substring(3));
                if (k == v) {
                    break;
                }
                assertTrue(k < v, line);
            }
        }
    }

    private static void signal(String sig, long pid) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid))
                .inheritIO()
                .start();
        assertTrue(k.waitFor() == 0, "kill -" + sig + " " + pid + " failed");
    }
}
