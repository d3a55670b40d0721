package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.buffer;
import static io.rdma4j.rendezvous.Fixtures.next;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Many peers at once, and a directory that restarts under its peers, over real loopback TCP. */
class ScaleAndRestartTest {
    private static final String TOKEN = "scale-token";

    @Test
    void thousandPeersAnnounceConcurrently() throws Exception {
        int peers = 1000;
        try (DirectoryServer server = DirectoryServer.builder()
                .bindAddress("127.0.0.1")
                .security(Security.token(TOKEN))
                .start()) {
            List<Rendezvous> clients = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                clients.add(Fixtures.client(server.target(), TOKEN));
            }
            LinkedBlockingQueue<PeerEvent> events = new LinkedBlockingQueue<>();
            ExecutorService pool = Executors.newFixedThreadPool(32);
            try (Rendezvous.Watch w = clients.getFirst().watch(events::add, e -> {})) {
                assertEquals(PeerEvent.Kind.SYNCED, next(events).kind());
                List<Future<Announcement>> futures = new ArrayList<>();
                for (int i = 0; i < peers; i++) {
                    Rendezvous c = clients.get(i % clients.size());
                    String name = "worker-" + i;
                    futures.add(pool.submit(() -> c.announce(peer(name, 2), Duration.ofMinutes(1))));
                }
                List<Announcement> announced = new ArrayList<>();
                for (Future<Announcement> f : futures) {
                    announced.add(f.get());
                }
                Set<String> joined = new HashSet<>();
                while (joined.size() < peers) {
                    PeerEvent e = next(events);
                    assertEquals(PeerEvent.Kind.JOINED, e.kind());
                    assertTrue(
                            joined.add(e.peer().name()),
                            "joined twice: " + e.peer().name());
                }
                assertEquals(peers, clients.get(3).list().size());
                assertEquals(
                        peer("worker-517", 2),
                        clients.get(5).resolve("worker-517").orElseThrow());

                List<Future<?>> closes = new ArrayList<>();
                for (Announcement a : announced) {
                    closes.add(pool.submit(a::close));
                }
                for (Future<?> f : closes) {
                    f.get();
                }
                assertEquals(0, clients.get(1).list().size());
                int left = 0;
                while (left < peers) {
                    assertEquals(PeerEvent.Kind.LEFT, next(events).kind());
                    left++;
                }
            } finally {
                pool.shutdownNow();
                clients.forEach(Rendezvous::close);
            }
        }
    }

    /** Polls {@code condition} until it holds; fails (rather than hangs) after a generous bound. */
    private static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("never happened: " + what);
    }

    @Test
    void peersReannounceAndRepublishAfterTheDirectoryRestarts() throws Exception {
        DirectoryServer first = DirectoryServer.builder()
                .bindAddress("127.0.0.1")
                .security(Security.token(TOKEN))
                .start();
        int port = first.port();
        try (Rendezvous manual = Fixtures.client(first.target(), TOKEN);
                Rendezvous auto = Fixtures.client(first.target(), TOKEN)) {
            Announcement a = manual.announce(peer("manual", 2), Duration.ofMinutes(1));
            a.publish(buffer("manual-buf", 2));
            a.publish(buffer("manual-secret", 1).withAccess(Set.of("auto")));
            // a short lease: background heartbeats every third of it do the re-announcing
            Announcement b = auto.announce(peer("auto", 1), Duration.ofMillis(300));
            b.publish(buffer("auto-buf", 1));

            first.close();
            RendezvousException down =
                    org.junit.jupiter.api.Assertions.assertThrows(RendezvousException.class, a::heartbeat);
            assertEquals(Status.Code.UNAVAILABLE, down.code());

            try (DirectoryServer second = DirectoryServer.builder()
                    .bindAddress("127.0.0.1")
                    .port(port)
                    .security(Security.token(TOKEN))
                    .start()) {
                assertEquals(0, second.peerCount(), "a new directory starts empty");
                eventually("manual heartbeat reaches the new directory", () -> {
                    try {
                        a.heartbeat();
                        return true;
                    } catch (RendezvousException e) {
                        return false; // the channel is still reconnecting
                    }
                });
                assertEquals(1, a.reannouncements());
                eventually("the short-lease peer re-announced on its own", () -> b.reannouncements() > 0);
                assertEquals(peer("manual", 2), manual.resolve("manual").orElseThrow());
                assertEquals(peer("auto", 1), manual.resolve("auto").orElseThrow());
                assertEquals("manual", manual.lookup("manual-buf").orElseThrow().owner());
                assertEquals(
                        buffer("auto-buf", 1).lanes(),
                        manual.lookup("auto-buf").orElseThrow().lanes());
                assertEquals(
                        Set.of("auto"),
                        b.lookup("manual-secret").orElseThrow().access(),
                        "access lists survive the restart");
                assertEquals(3, second.bufferCount());
                a.close();
                b.close();
                assertEquals(0, second.peerCount());
            }
        }
    }

    @Test
    void unrenewedLeasesExpireOnTheirOwn() throws Exception {
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(Security.token(TOKEN))
                        .leases(Duration.ofMillis(100), Duration.ofSeconds(10), Duration.ofMinutes(1))
                        .sweepInterval(Duration.ofMillis(50))
                        .start();
                Rendezvous r = Fixtures.client(server.target(), TOKEN)) {
            LinkedBlockingQueue<PeerEvent> events = new LinkedBlockingQueue<>();
            try (Rendezvous.Watch w = r.watch(events::add, e -> {})) {
                assertEquals(PeerEvent.Kind.SYNCED, next(events).kind());
                io.grpc.ManagedChannel raw =
                        io.rdma4j.rendezvous.internal.Transport.channel(server.target(), Security.token(TOKEN));
                try {
                    // announced without a client that renews it
                    io.rdma4j.proto.v1.DirectoryGrpc.newBlockingStub(raw)
                            .withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS)
                            .announce(io.rdma4j.proto.v1.AnnounceRequest.newBuilder()
                                    .setPeer(io.rdma4j.rendezvous.internal.Wire.toProto(peer("mayfly", 1)))
                                    .setLeaseMillis(100)
                                    .build());
                } finally {
                    raw.shutdownNow();
                }
                PeerEvent e;
                do {
                    e = next(events);
                } while (e.kind() != PeerEvent.Kind.LEFT);
                assertEquals("mayfly", e.peer().name());
                assertEquals(PeerEvent.Reason.EXPIRED, e.reason());
                assertEquals(0, server.peerCount(), "the sweeper removed it, not a read");
            }
        }
    }
}
