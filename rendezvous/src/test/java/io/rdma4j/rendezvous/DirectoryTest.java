package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.LEASE;
import static io.rdma4j.rendezvous.Fixtures.buffer;
import static io.rdma4j.rendezvous.Fixtures.next;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.AnnounceResponse;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.proto.v1.HeartbeatRequest;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.proto.v1.ListRequest;
import io.rdma4j.proto.v1.LookupRequest;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.proto.v1.ResolveRequest;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Wire;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The directory's behaviour with a clock the test advances; {@link InProcessDirectoryTest} runs it in-process,
 * {@link TcpDirectoryTest} over loopback TCP with a token.
 */
abstract class DirectoryTest {
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private DirectoryServer server;
    private Rendezvous client;
    private ManagedChannel raw;
    private DirectoryGrpc.DirectoryBlockingStub stub;

    /** @return {@code b} set to listen the way this variant tests */
    abstract DirectoryServer.Builder listen(DirectoryServer.Builder b);

    /** @return what clients of this variant present */
    abstract Security security();

    @BeforeEach
    void start() {
        server = listen(DirectoryServer.builder())
                .clock(clock::get)
                .sweepInterval(Duration.ZERO)
                .leases(Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMinutes(5))
                .start();
        client = Fixtures.client(server.target(), security());
        raw = Transport.channel(server.target(), security());
        stub = DirectoryGrpc.newBlockingStub(raw).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() {
        client.close();
        raw.shutdownNow();
        server.close();
    }

    private static Status.Code code(Runnable r) {
        try {
            r.run();
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        } catch (RendezvousException e) {
            return e.code();
        }
        throw new AssertionError("the call succeeded");
    }

    private AnnounceResponse rawAnnounce(PeerInfo p, int leaseMillis) {
        return stub.announce(AnnounceRequest.newBuilder()
                .setPeer(Wire.toProto(p))
                .setLeaseMillis(leaseMillis)
                .build());
    }

    @Test
    void announcesAndResolvesPeersWithTheirLanes() {
        PeerInfo a = peer("node-a", 4);
        try (Announcement ann = client.announce(a, LEASE)) {
            assertEquals(a, client.resolve("node-a").orElseThrow());
            assertEquals(
                    QpInfo.decode(a.lanes().getFirst().endpoint()),
                    client.resolve("node-a").orElseThrow().lanes().getFirst().qpInfo());
            assertTrue(client.resolve("node-b").isEmpty());
            assertEquals(List.of(a), client.list());
            assertEquals(Duration.ofSeconds(60), ann.lease());
        }
        assertTrue(client.resolve("node-a").isEmpty(), "closing the announcement withdraws the peer");
    }

    @Test
    void listsManyPeersInNameOrderAcrossPages() {
        int n = 2 * Rendezvous.LIST_PAGE + 100;
        java.util.stream.IntStream.range(0, n)
                .parallel()
                .forEach(i -> rawAnnounce(peer(String.format("p%04d", i), 1), 60_000));
        List<PeerInfo> all = client.list();
        assertEquals(n, all.size());
        for (int i = 0; i < all.size(); i++) {
            assertEquals(String.format("p%04d", i), all.get(i).name());
        }
        var page = stub.list(
                ListRequest.newBuilder().setPageSize(10).setAfter("p0100").build());
        assertEquals("p0101", page.getPeers(0).getName());
        assertEquals(10, page.getPeersCount());
        assertTrue(page.getMore());
    }

    @Test
    void watchStreamsPresentPeersThenJoinsUpdatesAndLeaves() throws Exception {
        rawAnnounce(peer("early", 1), 60_000);
        LinkedBlockingQueue<PeerEvent> events = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<RendezvousException> errors = new LinkedBlockingQueue<>();
        try (Rendezvous.Watch w = client.watch(events::add, errors::add)) {
            PeerEvent first = next(events);
            assertEquals(PeerEvent.Kind.JOINED, first.kind());
            assertEquals("early", first.peer().name());
            assertEquals(PeerEvent.Kind.SYNCED, next(events).kind());

            Announcement late = client.announce(peer("late", 2), LEASE);
            PeerEvent joined = next(events);
            assertEquals(PeerEvent.Kind.JOINED, joined.kind());
            assertEquals(peer("late", 2), joined.peer());

            PeerInfo changed = new PeerInfo("late", "127.0.0.1:1234", "elsewhere", 43, List.of(Fixtures.fabricLane(0)));
            rawAnnounce(changed, 60_000);
            PeerEvent updated = next(events);
            assertEquals(PeerEvent.Kind.UPDATED, updated.kind());
            assertEquals(changed, updated.peer());
            assertTrue(updated.revision() > joined.revision());

            late.close(); // its lease token was replaced by the raw announce: the withdraw is refused, so withdraw
            // explicitly
            AnnounceResponse mine = rawAnnounce(changed, 60_000);
            assertEquals(PeerEvent.Kind.UPDATED, next(events).kind());
            stub.withdraw(io.rdma4j.proto.v1.WithdrawRequest.newBuilder()
                    .setName("late")
                    .setLeaseToken(mine.getLeaseToken())
                    .build());
            PeerEvent left = next(events);
            assertEquals(PeerEvent.Kind.LEFT, left.kind());
            assertEquals(PeerEvent.Reason.WITHDRAWN, left.reason());
            assertTrue(errors.isEmpty());
        }
    }

    @Test
    void expiredLeaseRemovesThePeerAndItsBuffers() throws Exception {
        AnnounceResponse r = rawAnnounce(peer("short", 2), 1000);
        assertEquals(1000, r.getLeaseMillis());
        stub.publish(io.rdma4j.proto.v1.PublishRequest.newBuilder()
                .setOwner("short")
                .setLeaseToken(r.getLeaseToken())
                .setBuffer(Wire.toProto(buffer("short-buf", 2)))
                .build());
        LinkedBlockingQueue<PeerEvent> events = new LinkedBlockingQueue<>();
        try (Rendezvous.Watch w = client.watch(events::add, e -> {})) {
            assertEquals(PeerEvent.Kind.JOINED, next(events).kind());
            assertEquals(PeerEvent.Kind.SYNCED, next(events).kind());

            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(999));
            assertEquals(0, server.expireLeases());
            stub.heartbeat(HeartbeatRequest.newBuilder()
                    .setName("short")
                    .setLeaseToken(r.getLeaseToken())
                    .build());
            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(999));
            assertEquals(0, server.expireLeases(), "the heartbeat renewed the lease");
            assertTrue(client.resolve("short").isPresent());

            clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
            assertTrue(client.resolve("short").isEmpty(), "an expired peer is invisible even before the sweep");
            assertEquals(1, server.expireLeases());
            PeerEvent left = next(events);
            assertEquals(PeerEvent.Kind.LEFT, left.kind());
            assertEquals(PeerEvent.Reason.EXPIRED, left.reason());
            assertTrue(client.lookup("short-buf").isEmpty());
            assertEquals(0, server.bufferCount());
            assertEquals(
                    Status.Code.NOT_FOUND,
                    code(() -> stub.heartbeat(HeartbeatRequest.newBuilder()
                            .setName("short")
                            .setLeaseToken(r.getLeaseToken())
                            .build())));
        }
    }

    @Test
    void clampsRequestedLeasesToTheDirectoryLimits() {
        assertEquals(1000, rawAnnounce(peer("tiny", 1), 1).getLeaseMillis());
        assertEquals(300_000, rawAnnounce(peer("huge", 1), Integer.MAX_VALUE).getLeaseMillis());
        assertEquals(10_000, rawAnnounce(peer("default", 1), 0).getLeaseMillis());
    }

    @Test
    void relaysLanesOfUnknownBackendsAndClientsIgnoreThem() {
        Lane future = Lane.newBuilder()
                .setIndex(7)
                .setBackendValue(99)
                .setDevice("hyperlink0")
                .setNumaNode(-1)
                .setEndpoint(ByteString.copyFrom(new byte[40]))
                .build();
        Peer p = Wire.toProto(peer("mixed", 1)).toBuilder().addLanes(future).build();
        stub.announce(AnnounceRequest.newBuilder().setPeer(p).build());
        Peer relayed = stub.resolve(ResolveRequest.newBuilder().setName("mixed").build())
                .getPeer();
        assertEquals(2, relayed.getLanesCount());
        assertEquals(99, relayed.getLanes(1).getBackendValue());
        PeerInfo seen = client.resolve("mixed").orElseThrow();
        assertEquals(1, seen.lanes().size());
        assertEquals(Backend.IBVERBS, seen.lanes().getFirst().backend());
    }

    @Test
    void carriesAnyBackendIdAndReadsLanesOfPeersOlderThanTheField() {
        Lane noop = Wire.toProto(new LaneInfo(3, "noop", "noop", "noop", null, 0, new byte[] {3}));
        assertEquals(io.rdma4j.proto.v1.Backend.BACKEND_OTHER, noop.getBackend());
        assertEquals("noop", noop.getBackendId());
        Lane old = Wire.toProto(peer("x", 1)).getLanes(0).toBuilder()
                .clearBackendId()
                .build();
        Peer p = Wire.toProto(peer("ids", 1)).toBuilder()
                .clearLanes()
                .addLanes(old)
                .addLanes(noop)
                .build();
        stub.announce(AnnounceRequest.newBuilder().setPeer(p).build());
        Peer relayed =
                stub.resolve(ResolveRequest.newBuilder().setName("ids").build()).getPeer();
        assertEquals("noop", relayed.getLanes(1).getBackendId());
        PeerInfo seen = client.resolve("ids").orElseThrow();
        assertEquals(
                List.of("ibverbs", "noop"),
                seen.lanes().stream().map(LaneInfo::backendId).toList());
        assertEquals(
                List.of(Backend.IBVERBS, Backend.OTHER),
                seen.lanes().stream().map(LaneInfo::backend).toList());
    }

    @Test
    void listsEachPeersLeaseAndPublishedBuffersForOperators() {
        try (Announcement owner = client.announce(peer("status-owner", 2), LEASE);
                Announcement idle = client.announce(peer("status-idle", 1), LEASE)) {
            owner.publish(buffer("status-b", 2));
            owner.publish(buffer("status-a", 2).withAccess(Set.of("status-idle")));
            List<PeerStatus> all = client.listStatus();
            assertEquals(
                    List.of("status-idle", "status-owner"),
                    all.stream().map(s -> s.peer().name()).toList());
            PeerStatus o = all.get(1);
            assertEquals(peer("status-owner", 2), o.peer());
            assertEquals(List.of("status-a", "status-b"), o.buffers(), "every buffer, restricted ones too, in order");
            assertEquals(LEASE.toMillis(), o.leaseMillis());
            assertTrue(
                    o.leaseRemainingMillis() > 0 && o.leaseRemainingMillis() <= LEASE.toMillis(),
                    "lease left: " + o.leaseRemainingMillis());
            assertEquals(List.of(), all.get(0).buffers());
        }
    }

    @Test
    void releasesKeysOnlyToPeersOnTheAccessList() {
        try (Announcement owner = client.announce(peer("owner", 2), LEASE);
                Announcement friend = client.announce(peer("friend", 1), LEASE);
                Announcement stranger = client.announce(peer("stranger", 1), LEASE)) {
            owner.publish(buffer("open", 2));
            owner.publish(buffer("secret", 2).withAccess(Set.of("friend")));

            BufferInfo open = client.lookup("open").orElseThrow();
            assertEquals("owner", open.owner());
            assertEquals(buffer("open", 2).lanes(), open.lanes());
            assertEquals(open, stranger.lookup("open").orElseThrow());

            BufferInfo secret = friend.lookup("secret").orElseThrow();
            assertEquals(0x1001, secret.lane(1).key());
            assertEquals(Set.of("friend"), secret.access());
            RendezvousException denied = assertThrows(RendezvousException.class, () -> stranger.lookup("secret"));
            assertEquals(Status.Code.PERMISSION_DENIED, denied.code());
            assertTrue(denied.getMessage().contains("not on the access list"), denied.getMessage());
            assertEquals(Status.Code.PERMISSION_DENIED, code(() -> client.lookup("secret")));
            assertTrue(friend.lookup("nothing").isEmpty());
        }
    }

    @Test
    void refusesForgedLeaseTokens() {
        rawAnnounce(peer("victim", 2), 60_000);
        AnnounceResponse attacker = rawAnnounce(peer("attacker", 1), 60_000);
        ByteString forged = ByteString.copyFrom(new byte[16]);
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(() -> stub.heartbeat(HeartbeatRequest.newBuilder()
                        .setName("victim")
                        .setLeaseToken(forged)
                        .build())));
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(() -> stub.withdraw(io.rdma4j.proto.v1.WithdrawRequest.newBuilder()
                        .setName("victim")
                        .setLeaseToken(attacker.getLeaseToken())
                        .build())));
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(() -> stub.publish(io.rdma4j.proto.v1.PublishRequest.newBuilder()
                        .setOwner("victim")
                        .setLeaseToken(attacker.getLeaseToken())
                        .setBuffer(Wire.toProto(buffer("fake", 1)))
                        .build())));
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(() -> stub.heartbeat(HeartbeatRequest.newBuilder()
                        .setName("victim")
                        .setLeaseToken(ByteString.copyFrom(new byte[3]))
                        .build())));
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(() -> stub.lookup(LookupRequest.newBuilder()
                        .setName("x")
                        .setLeaseToken(forged)
                        .build())));
        assertTrue(client.resolve("victim").isPresent());
    }

    @Test
    void publishChecksLanesOwnershipAndGenerations() {
        try (Announcement a = client.announce(peer("pa", 2), LEASE);
                Announcement b = client.announce(peer("pb", 2), LEASE)) {
            RendezvousException e = assertThrows(RendezvousException.class, () -> a.publish(buffer("wide", 3)));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
            assertTrue(e.getMessage().contains("lane 2"), e.getMessage());

            a.publish(buffer("shared", 2));
            assertEquals(Status.Code.ALREADY_EXISTS, code(() -> b.publish(buffer("shared", 2))));
            assertEquals(Status.Code.PERMISSION_DENIED, code(() -> b.unpublish("shared")));

            BufferInfo v5 = new BufferInfo(
                    "shared",
                    "",
                    4096,
                    MemoryKind.CUDA,
                    Locality.cuda(1, "0000:af:00.0", 1),
                    5,
                    buffer("x", 1).lanes(),
                    Set.of());
            a.publish(v5);
            BufferInfo seen = client.lookup("shared").orElseThrow();
            assertEquals(5, seen.generation());
            assertEquals(MemoryKind.CUDA, seen.memoryKind());
            assertEquals(Locality.cuda(1, "0000:af:00.0", 1), seen.locality());
            assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> a.publish(buffer("shared", 2))));

            a.unpublish("shared");
            assertTrue(client.lookup("shared").isEmpty());
            assertEquals(Status.Code.NOT_FOUND, code(() -> a.unpublish("shared")));
            b.publish(buffer("shared", 1));
            assertEquals("pb", client.lookup("shared").orElseThrow().owner());
        }
    }

    @Test
    void withdrawingRemovesThePeersBuffers() {
        Announcement a = client.announce(peer("leaver", 1), LEASE);
        a.publish(buffer("leaver-buf", 1));
        assertTrue(client.lookup("leaver-buf").isPresent());
        a.close();
        a.close();
        assertTrue(client.lookup("leaver-buf").isEmpty());
        assertEquals(0, server.bufferCount());
        assertThrows(IllegalStateException.class, () -> a.publish(buffer("late", 1)));
    }

    @Test
    void reannouncingKeepsBuffersOnlyForTheSameGeneration() {
        AnnounceResponse first = rawAnnounce(peer("gen", 2), 60_000);
        stub.publish(io.rdma4j.proto.v1.PublishRequest.newBuilder()
                .setOwner("gen")
                .setLeaseToken(first.getLeaseToken())
                .setBuffer(Wire.toProto(buffer("gen-buf", 2)))
                .build());
        AnnounceResponse again = rawAnnounce(peer("gen", 2), 60_000);
        assertNotEquals(first.getLeaseToken(), again.getLeaseToken());
        assertTrue(client.lookup("gen-buf").isPresent(), "same process re-announcing keeps its buffers");
        PeerInfo restarted =
                new PeerInfo("gen", "127.0.0.1:9999", "host", 43, peer("gen", 2).lanes());
        rawAnnounce(restarted, 60_000);
        assertTrue(client.lookup("gen-buf").isEmpty(), "a restarted process's old keys are gone");
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(() -> stub.heartbeat(HeartbeatRequest.newBuilder()
                        .setName("gen")
                        .setLeaseToken(first.getLeaseToken())
                        .build())));
    }

    @Test
    void refusesPeersBeyondCapacity() {
        try (DirectoryServer small =
                        listen(DirectoryServer.builder()).capacity(3, 10, 2, 1).start();
                Rendezvous r = Fixtures.client(small.target(), security())) {
            Announcement a = r.announce(peer("c0", 1), LEASE);
            r.announce(peer("c1", 1), LEASE);
            r.announce(peer("c2", 1), LEASE);
            RendezvousException e = assertThrows(RendezvousException.class, () -> r.announce(peer("c3", 1), LEASE));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
            a.publish(buffer("b0", 1));
            a.publish(buffer("b1", 1));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, code(() -> a.publish(buffer("b2", 1))));
            LinkedBlockingQueue<PeerEvent> firstEvents = new LinkedBlockingQueue<>();
            try (Rendezvous.Watch w = r.watch(firstEvents::add, ev -> {})) {
                while (next(firstEvents).kind() != PeerEvent.Kind.SYNCED) {
                    // the first watch is registered once it is synced
                }
                LinkedBlockingQueue<RendezvousException> errors = new LinkedBlockingQueue<>();
                try (Rendezvous.Watch second = r.watch(ev -> {}, errors::add)) {
                    assertEquals(Status.Code.RESOURCE_EXHAUSTED, next(errors).code());
                }
            } catch (InterruptedException ex) {
                throw new AssertionError(ex);
            }
        }
    }
}
