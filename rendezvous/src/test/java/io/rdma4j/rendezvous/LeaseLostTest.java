package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.buffer;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A peer whose lease ran out before a heartbeat renewed it (its process stalled for longer than the lease, as a JVM
 * starting beside others on a busy machine can) publishes again: the directory answers NOT_FOUND, "announce again", and
 * the announcement does so instead of failing the publish.
 */
class LeaseLostTest {
    @Test
    void publishAfterTheLeaseRanOutAnnouncesAgainAndKeepsEveryBuffer() {
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .clock(clock::get)
                        .sweepInterval(Duration.ZERO)
                        .start();
                Rendezvous owner = Fixtures.client(server.target(), Security.none());
                Rendezvous other = Fixtures.client(server.target(), Security.none())) {
            Announcement a = owner.announce(peer("stalled", 2), Duration.ofMinutes(1));
            a.publish(buffer("first", 2));
            clock.addAndGet(Duration.ofMinutes(2).toNanos()); // no heartbeat for two leases
            assertEquals(1, server.expireLeases());
            assertTrue(other.resolve("stalled").isEmpty(), "the directory forgot the peer");

            a.publish(buffer("second", 2));

            assertEquals(1, a.reannouncements());
            assertEquals(peer("stalled", 2), other.resolve("stalled").orElseThrow());
            assertEquals("stalled", other.lookup("first").orElseThrow().owner(), "published before: published again");
            assertEquals("stalled", other.lookup("second").orElseThrow().owner());
            a.close();
            assertEquals(0, server.peerCount());
        }
    }
}
