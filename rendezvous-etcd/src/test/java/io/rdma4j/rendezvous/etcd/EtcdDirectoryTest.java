package io.rdma4j.rendezvous.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import io.rdma4j.rendezvous.PeerEvent;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.PeerStatus;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import io.rdma4j.rendezvous.Security;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Wire;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The directory's calls over a real etcd, served by two stateless directory servers at once. */
class EtcdDirectoryTest {
    private static LocalEtcdCluster etcd;
    private static String url;
    private static DirectoryServer a;
    private static DirectoryServer b;

    @BeforeAll
    static void start() throws Exception {
        String missing = LocalEtcdCluster.unavailabilityCause();
        assumeTrue(missing == null, missing);
        etcd = LocalEtcdCluster.start(Files.createTempDirectory("rdma4j-etcd-"), 1);
        url = etcd.url() + "/" + UUID.randomUUID();
        a = DirectoryServer.builder().port(0).store(url).start();
        b = DirectoryServer.builder().port(0).store(url).start();
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {b, a, etcd}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // the next one is closed regardless
                }
            }
        }
    }

    static PeerInfo peer(String name, long generation) {
        return new PeerInfo(
                name,
                "127.0.0.1:9999",
                "host",
                generation,
                List.of(LaneInfo.libfabric(
                        0, "tcp;ofi_rxm", "lo", null, -1, new byte[] {2, 0, 0x1f, 0x40, 127, 0, 0, 1})));
    }

    static BufferInfo buffer(String name, long generation) {
        return BufferInfo.of(
                name, 1 << 20, MemoryKind.HOST, Locality.host(0), generation, List.of(new LaneKey(0, 0x7f00_0000L, 7)));
    }

    static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    @Test
    void announcementThroughOneDirectoryIsServedByTheOther() {
        String n = name("p");
        try (Rendezvous ra = Rendezvous.connect(a.target(), Security.none());
                Rendezvous rb = Rendezvous.connect(b.target(), Security.none());
                Announcement me = ra.announce(peer(n, 1), Duration.ofSeconds(5))) {
            me.publish(buffer(n + "/w", 1));
            me.publish(buffer(n + "/secret", 1).withAccess(Set.of("someone-else")));
            assertEquals(1, rb.resolve(n).orElseThrow().generation());
            assertEquals(n, rb.lookup(n + "/w").orElseThrow().owner());
            RendezvousException denied = assertThrows(RendezvousException.class, () -> rb.lookup(n + "/secret"));
            assertEquals(Status.Code.PERMISSION_DENIED, denied.code());
            assertTrue(rb.list().stream().anyMatch(p -> p.name().equals(n)));
            PeerStatus st = rb.listStatus().stream()
                    .filter(p -> p.peer().name().equals(n))
                    .findFirst()
                    .orElseThrow();
            assertEquals(List.of(n + "/secret", n + "/w"), st.buffers(), "its buffers, from etcd, in name order");
            assertEquals(5000, st.leaseMillis());
            assertTrue(
                    st.leaseRemainingMillis() > 0 && st.leaseRemainingMillis() <= 5000,
                    "the etcd lease's time left: " + st.leaseRemainingMillis());
            me.heartbeat();
            assertEquals(0, me.reannouncements());
        }
        try (Rendezvous rb = Rendezvous.connect(b.target(), Security.none())) {
            assertTrue(rb.resolve(n).isEmpty(), "withdrawn on close");
            assertTrue(rb.lookup(n + "/w").isEmpty(), "its buffers left with it");
        }
    }

    @Test
    void aSecondClaimOfANameWinsAndTheFirstLearnsIt() {
        String n = name("claimed");
        try (Rendezvous ra = Rendezvous.connect(a.target(), Security.none());
                Rendezvous rb = Rendezvous.connect(b.target(), Security.none());
                Announcement first = ra.announce(peer(n, 1), Duration.ofSeconds(5));
                Announcement second = rb.announce(peer(n, 2), Duration.ofSeconds(5))) {
            RendezvousException lost = assertThrows(RendezvousException.class, first::heartbeat);
            assertEquals(Status.Code.PERMISSION_DENIED, lost.code());
            second.heartbeat();
            assertEquals(2, ra.resolve(n).orElseThrow().generation());
        }
    }

    @Test
    void aRestartedPeerGetsItsNewGenerationAndItsOldBuffersAreGone() {
        String n = name("restarts");
        try (Rendezvous r = Rendezvous.connect(a.target(), Security.none())) {
            Announcement old = r.announce(peer(n, 1), Duration.ofSeconds(5));
            old.publish(buffer(n + "/old", 1));
            try (Announcement restarted = r.announce(peer(n, 2), Duration.ofSeconds(5))) {
                assertEquals(2, r.resolve(n).orElseThrow().generation());
                assertTrue(r.lookup(n + "/old").isEmpty(), "a buffer of the old generation must not be served");
                restarted.publish(buffer(n + "/new", 2));
                assertEquals(2, r.lookup(n + "/new").orElseThrow().generation());
            }
            old.close();
        }
    }

    @Test
    void watchReportsJoinWithdrawalAndExpiryFromAnyDirectory() throws Exception {
        String n = name("watched");
        String gone = name("expires");
        BlockingQueue<PeerEvent> events = new LinkedBlockingQueue<>();
        try (Rendezvous ra = Rendezvous.connect(a.target(), Security.none());
                Rendezvous rb = Rendezvous.connect(b.target(), Security.none());
                Rendezvous.Watch w = rb.watch(events::add, e -> {})) {
            while (next(events).kind() != PeerEvent.Kind.SYNCED) {
                // skip peers of other tests
            }
            ra.announce(peer(n, 1), Duration.ofSeconds(5)).close();
            PeerEvent joined = nextAbout(events, n);
            assertEquals(PeerEvent.Kind.JOINED, joined.kind());
            PeerEvent left = nextAbout(events, n);
            assertEquals(PeerEvent.Kind.LEFT, left.kind());
            assertEquals(PeerEvent.Reason.WITHDRAWN, left.reason());
            // an announcer that stops renewing (a killed engine): etcd expires its lease, the watch says so
            announceWithoutRenewing(a.target(), peer(gone, 1), 1000);
            assertEquals(PeerEvent.Kind.JOINED, nextAbout(events, gone).kind());
            PeerEvent expired = nextAbout(events, gone);
            assertEquals(PeerEvent.Kind.LEFT, expired.kind());
            assertEquals(PeerEvent.Reason.EXPIRED, expired.reason());
            assertTrue(ra.resolve(gone).isEmpty());
        }
    }

    @Test
    void anEngineCanUseEtcdWithNoDirectoryProcess() {
        String n = name("direct");
        try (Rendezvous direct = Rendezvous.connect(url, Security.none());
                Rendezvous viaDirectory = Rendezvous.connect(a.target(), Security.none());
                Announcement me = direct.announce(peer(n, 3), Duration.ofSeconds(5))) {
            me.publish(buffer(n + "/w", 1).withAccess(Set.of(n)));
            assertEquals(3, viaDirectory.resolve(n).orElseThrow().generation());
            assertEquals(n, me.lookup(n + "/w").orElseThrow().owner());
            RendezvousException denied = assertThrows(RendezvousException.class, () -> direct.lookup(n + "/w"));
            assertEquals(Status.Code.PERMISSION_DENIED, denied.code(), "access lists hold on the client side too");
            RendezvousException bad = assertThrows(
                    RendezvousException.class,
                    () -> me.publish(BufferInfo.of(
                            n + "/x", 1, MemoryKind.HOST, Locality.host(0), 1, List.of(new LaneKey(5, 0, 0)))));
            assertEquals(Status.Code.INVALID_ARGUMENT, bad.code(), "validated on the client side too");
            assertTrue(bad.getMessage().contains("did not announce"), bad.getMessage());
        }
    }

    @Test
    void aClientFailsOverToTheNextDirectoryWhenOneIsDown() {
        String n = name("failover");
        DirectoryServer doomed = DirectoryServer.builder().port(0).store(url).start();
        String list = doomed.target() + "," + a.target();
        try (Rendezvous r = Rendezvous.connect(list, Security.none());
                Announcement me = r.announce(peer(n, 1), Duration.ofSeconds(5))) {
            doomed.close();
            me.heartbeat();
            me.publish(buffer(n + "/w", 1));
            assertEquals(1, r.resolve(n).orElseThrow().generation());
        }
    }

    @Test
    void anUnreachableEtcdFailsCallsFastNamingEtcdAndRecoversWithoutRestart() throws Exception {
        String n = name("partitioned");
        try (Rendezvous r = Rendezvous.connect(a.target(), Security.none());
                Announcement me = r.announce(peer(n, 1), Duration.ofSeconds(2))) {
            etcd.pause(0);
            try {
                RendezvousException down = assertThrows(RendezvousException.class, () -> r.resolve(n));
                assertEquals(Status.Code.UNAVAILABLE, down.code());
                assertTrue(down.getMessage().contains("etcd"), down.getMessage());
            } finally {
                etcd.resume(0);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                try {
                    me.heartbeat(); // re-announces if the lease ran out while etcd was away
                    break;
                } catch (RendezvousException e) {
                    if (System.nanoTime() - deadline > 0) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
            assertNotEquals(java.util.Optional.empty(), r.resolve(n));
        }
    }

    /** Announces as a process that then dies would: nothing renews the lease. */
    static void announceWithoutRenewing(String target, PeerInfo p, int leaseMillis) {
        ManagedChannel ch = Transport.channel(target, Security.none());
        try {
            DirectoryGrpc.newBlockingStub(ch)
                    .announce(AnnounceRequest.newBuilder()
                            .setPeer(Wire.toProto(p))
                            .setLeaseMillis(leaseMillis)
                            .build());
        } finally {
            ch.shutdownNow();
        }
    }

    private static PeerEvent next(BlockingQueue<PeerEvent> q) throws InterruptedException {
        PeerEvent e = q.poll(20, TimeUnit.SECONDS);
        if (e == null) {
            throw new AssertionError("no event within 20 s");
        }
        return e;
    }

    private static PeerEvent nextAbout(BlockingQueue<PeerEvent> q, String name) throws InterruptedException {
        while (true) {
            PeerEvent e = next(q);
            if (e.peer() != null && e.peer().name().equals(name)) {
                return e;
            }
        }
    }
}
