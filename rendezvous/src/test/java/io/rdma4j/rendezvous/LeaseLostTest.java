package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.buffer;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A peer whose lease ran out before a heartbeat renewed it (its process stalled for longer than the lease, as a JVM
 * starting beside others on a busy machine can) publishes again: the directory answers NOT_FOUND, "announce again", and
 * the announcement does so instead of failing the publish.
 */
class LeaseLostTest {
    @Test
    void publishAfterTheLeaseRanOutAnnouncesAgainAndKeepsEveryBuffer() throws InterruptedException {
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .clock(clock::get)
                        .sweepInterval(Duration.ZERO)
                        .start();
                Rendezvous owner = Fixtures.client(server.target(), Security.none());
                Rendezvous other = Fixtures.client(server.target(), Security.none())) {
            List<String> told = new CopyOnWriteArrayList<>();
            List<PeerEvent> seen = new CopyOnWriteArrayList<>();
            other.watch(seen::add, e -> {});
            Announcement a = owner.announce(peer("stalled", 2), Duration.ofMinutes(1), new Announcement.Listener() {
                @Override
                public void reannouncing() {
                    told.add("reannouncing: stalled resolves " + other.resolve("stalled"));
                }

                @Override
                public void reannounced(long revision) {
                    told.add("reannounced at " + revision);
                }
            });
            long first = a.revision();
            a.publish(buffer("first", 2));
            clock.addAndGet(Duration.ofMinutes(2).toNanos()); // no heartbeat for two leases
            assertEquals(1, server.expireLeases());
            assertTrue(other.resolve("stalled").isEmpty(), "the directory forgot the peer");
            assertEquals(List.of(), told, "nothing to tell before the peer finds out");

            a.publish(buffer("second", 2));

            assertEquals(1, a.reannouncements());
            assertEquals(
                    List.of("reannouncing: stalled resolves Optional.empty", "reannounced at " + a.revision()),
                    told,
                    "told before the new announcement is sent, and after it was recorded");
            PeerEvent expired = awaitEvent(seen, PeerEvent.Kind.LEFT);
            assertEquals(PeerEvent.Reason.EXPIRED, expired.reason());
            assertTrue(
                    first < expired.revision() && expired.revision() < a.revision(),
                    "the expiry's revision " + expired.revision() + " lies between the announcements' (" + first + ", "
                            + a.revision() + ")");
            assertEquals(peer("stalled", 2), other.resolve("stalled").orElseThrow());
            assertEquals("stalled", other.lookup("first").orElseThrow().owner(), "published before: published again");
            assertEquals("stalled", other.lookup("second").orElseThrow().owner());
            a.close();
            assertEquals(0, server.peerCount());
        }
    }

    private static PeerEvent awaitEvent(List<PeerEvent> seen, PeerEvent.Kind kind) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < end) {
            for (PeerEvent e : seen) {
                if (e.kind() == kind) {
                    return e;
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no " + kind + " event within 30 s: " + seen);
    }
}
