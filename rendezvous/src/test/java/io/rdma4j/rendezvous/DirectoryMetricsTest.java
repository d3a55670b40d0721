package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.LEASE;
import static io.rdma4j.rendezvous.Fixtures.buffer;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Wire;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The directory's meters move with the calls it answers: resolves and lookups by outcome, and each lease event. */
class DirectoryMetricsTest {
    @Test
    void countsResolvesLookupsAndLeaseEvents() {
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        MeterRegistry registry = new SimpleMeterRegistry();
        DirectoryServer server = DirectoryServer.builder()
                .inProcess(Fixtures.uniqueName("metrics"))
                .clock(clock::get)
                .sweepInterval(Duration.ZERO)
                .leases(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(5))
                .meterRegistry(registry)
                .start();
        ManagedChannel raw = Transport.channel(server.target(), Security.none());
        try (server;
                Rendezvous client = Fixtures.client(server.target(), Security.none())) {
            Announcement a = client.announce(peer("m-a", 1), LEASE);
            a.heartbeat();
            assertTrue(client.resolve("m-a").isPresent());
            assertTrue(client.resolve("m-nobody").isEmpty());
            a.publish(buffer("m-buf", 1));
            assertTrue(client.lookup("m-buf").isPresent());
            assertTrue(client.lookup("m-nothing").isEmpty());
            assertTrue(client.lookup("m-nothing-either").isEmpty());
            assertEquals(1, count(registry, "rdma4j.directory.resolves", "kind", "peer", "outcome", "ok"));
            assertEquals(1, count(registry, "rdma4j.directory.resolves", "kind", "peer", "outcome", "not_found"));
            assertEquals(1, count(registry, "rdma4j.directory.resolves", "kind", "buffer", "outcome", "ok"));
            assertEquals(2, count(registry, "rdma4j.directory.resolves", "kind", "buffer", "outcome", "not_found"));
            assertEquals(1, lease(registry, "granted"));
            assertEquals(1, lease(registry, "renewed"));
            assertEquals(
                    1, registry.get("rdma4j.directory.leases.active").gauge().value());
            assertEquals(1, registry.get("rdma4j.directory.buffers").gauge().value());

            // a peer that announces with a 1 s lease and never renews it
            DirectoryGrpc.newBlockingStub(raw)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .announce(AnnounceRequest.newBuilder()
                            .setPeer(Wire.toProto(peer("m-b", 1)))
                            .setLeaseMillis(1000)
                            .build());
            assertEquals(2, lease(registry, "granted"));
            assertEquals(
                    2, registry.get("rdma4j.directory.leases.active").gauge().value());
            clock.addAndGet(TimeUnit.SECONDS.toNanos(2));
            assertEquals(1, server.expireLeases());
            assertEquals(1, lease(registry, "expired"));
            a.close();
            assertEquals(1, lease(registry, "withdrawn"));
            assertEquals(
                    0, registry.get("rdma4j.directory.leases.active").gauge().value());
        } finally {
            raw.shutdownNow();
        }
        assertEquals(List.of(), registry.getMeters(), "a closed directory leaves no meters behind");
    }

    private static long lease(MeterRegistry registry, String event) {
        return count(registry, "rdma4j.directory.leases", "event", event);
    }

    private static long count(MeterRegistry registry, String name, String... tags) {
        return (long) registry.get(name).tags(tags).counter().count();
    }
}
