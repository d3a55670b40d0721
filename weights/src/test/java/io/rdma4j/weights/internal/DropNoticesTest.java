package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.Notifications;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import java.lang.foreign.Arena;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Drop notices between two engines over libfabric shm: a dropped subscriber is told, a join that arrived stops the
 * notices, a join the publisher refused resumes them with the same number (a subscriber paused past its lease may
 * answer a notice before it announced itself again, and is refused until it did), an admitted one is told no more, and
 * one refused without a drop before it is told to join again with a new number.
 */
class DropNoticesTest {
    private static final int RANK = 3;
    private static final int EPOCH = 41;

    @Test
    void aRefusedJoinIsToldAgainAndAnAdmittedOneNoMore() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine pub = ShmEngines.engine("drops-pub", dir.target());
                TransferEngine sub = ShmEngines.engine("drops-sub", dir.target())) {
            LocalBuffer inbox = sub.register(arena.allocate(4096, 4096));
            sub.publish("inbox", inbox, Access.anyPeer());
            LocalBuffer from = pub.register(arena.allocate(4096, 4096));
            DropNotices drops = new DropNotices(pub, from, 8, "inbox", 64, RANK, EPOCH, Duration.ofSeconds(5));
            Notifications told = sub.notifications();

            drops.joined("drops-sub");
            assertFalse(drops.telling("drops-sub"), "a join from one never dropped is nothing to answer");

            drops.dropped("drops-sub", pub.peer("drops-sub").buffer("inbox"), 9);
            long first = notice(told.poll(Duration.ofSeconds(20)), 9);
            assertTrue(drops.telling("drops-sub"));

            drops.joined("drops-sub");
            assertFalse(drops.telling("drops-sub"), "its join arrived: it waits to be admitted, not told");

            drops.refused("drops-sub", 9);
            assertTrue(drops.telling("drops-sub"), "its join was refused: it must be told again to join again");
            assertEquals(first, notice(retryUntilTold(drops, told, -1), 9), "a notice told again keeps its number");

            drops.joined("drops-sub");
            drops.admitted("drops-sub");
            assertFalse(drops.telling("drops-sub"), "admitted: told no more");

            // a join refused with no drop before it (its wishes could not be read in time): told to join again
            drops.joined("drops-sub");
            drops.refused("drops-sub", 12);
            assertTrue(drops.telling("drops-sub"));
            long next = notice(retryUntilTold(drops, told, first), 12);
            assertTrue(next != first, "a new notice takes a new number");
        }
    }

    /**
     * Retries until a notice arrives (a notice still on its way holds the next one back), for up to 20 s; skips repeats
     * of notice {@code stale} that were still on their way.
     */
    private static Notification retryUntilTold(DropNotices drops, Notifications told, long stale)
            throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < end) {
            drops.retry();
            Notification n = told.poll(Duration.ofSeconds(5));
            if (n != null && Tags.piece(n.tag()) != stale) {
                return n;
            }
        }
        return null;
    }

    /** Checks {@code n} is a drop notice from this rank for {@code version}; {@return its number} */
    private static long notice(Notification n, long version) {
        assertTrue(n != null, "no drop notice arrived in 20 s");
        assertEquals("drops-pub", n.peer());
        assertEquals(Tags.DROP, Tags.kind(n.tag()));
        assertEquals(RANK, Tags.rank(n.tag()));
        assertEquals(EPOCH, Tags.epoch(n.tag()));
        assertEquals(version, Tags.version(n.tag()));
        return Tags.piece(n.tag());
    }
}
