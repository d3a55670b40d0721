package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.fabricLane;
import static io.rdma4j.rendezvous.Fixtures.ibverbsLane;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.ConnectRequest;
import io.rdma4j.proto.v1.HandshakeGrpc;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Handshake protocol around a handler: pairing, idempotent retries, generations, Describe with access lists. */
class HandshakeTest {
    /** A handler that makes a new local endpoint per remote lane, as an engine does, and records what it was asked. */
    static final class RecordingHandler implements HandshakeHandler {
        final AtomicInteger connects = new AtomicInteger();
        final AtomicInteger nextQp = new AtomicInteger(1000);
        final List<String> restarts = new CopyOnWriteArrayList<>();
        final List<List<LaneInfo>> offered = new CopyOnWriteArrayList<>();
        final List<Long> lapses = new CopyOnWriteArrayList<>();
        final Map<String, BufferInfo> buffers = new ConcurrentHashMap<>();
        volatile RuntimeException failWith;

        @Override
        public List<LanePairing> connect(String initiator, long generation, List<LaneInfo> remoteLanes) {
            if (failWith != null) {
                throw failWith;
            }
            connects.incrementAndGet();
            offered.add(remoteLanes);
            List<LanePairing> out = new ArrayList<>();
            for (LaneInfo remote : remoteLanes) {
                LaneInfo local = switch (remote.backend()) {
                    case IBVERBS -> {
                        remote.qpInfo(); // the engine parses what it will use
                        yield ibverbsLane(remote.index(), nextQp.getAndIncrement());
                    }
                    case LIBFABRIC -> fabricLane(remote.index());
                    case OTHER -> throw new AssertionError("this handler pairs ibverbs and libfabric lanes: " + remote);
                };
                out.add(new LanePairing(remote.index(), local));
            }
            return out;
        }

        @Override
        public List<LanePairing> connect(
                String initiator, long generation, long lapseRevision, List<LaneInfo> remoteLanes) {
            lapses.add(lapseRevision);
            return connect(initiator, generation, remoteLanes);
        }

        @Override
        public Optional<BufferInfo> describe(String name) {
            return Optional.ofNullable(buffers.get(name));
        }

        @Override
        public void peerRestarted(String initiator, long previousGeneration, long newGeneration) {
            restarts.add(initiator + ":" + previousGeneration + "->" + newGeneration);
        }
    }

    private final RecordingHandler handler = new RecordingHandler();
    private HandshakeServer server;
    private HandshakeClient client;

    @BeforeEach
    void start() {
        server = HandshakeServer.builder("responder", 77, handler)
                .inProcess(Fixtures.uniqueName("hs"))
                .start();
        client = Fixtures.handshakeClient(server.address(), Security.none());
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    private static Status.Code code(Runnable r) {
        return assertThrows(RendezvousException.class, r::run).code();
    }

    @Test
    void pairsEveryOfferedLaneWithAResponderEndpoint() {
        HandshakeResult r = client.connect("initiator", 5, "responder", List.of(ibverbsLane(0, 11), fabricLane(1)));
        assertEquals("responder", r.responder());
        assertEquals(77, r.responderGeneration());
        assertEquals(2, r.lanes().size());
        assertEquals(0, r.lanes().get(0).initiatorLane());
        assertEquals(1000, r.lanes().get(0).responderLane().qpInfo().qpNum());
        assertEquals(Backend.LIBFABRIC, r.lanes().get(1).responderLane().backend());
        assertEquals(List.of(ibverbsLane(0, 11), fabricLane(1)), handler.offered.getFirst());
        assertEquals(16, r.sessionToken().length);
    }

    @Test
    void retriesGetTheSameAnswerWithoutNewEndpoints() {
        List<LaneInfo> lanes = List.of(ibverbsLane(0, 11), ibverbsLane(1, 12));
        HandshakeResult first = client.connect("initiator", 5, "responder", lanes);
        HandshakeResult retry = client.connect("initiator", 5, "responder", lanes);
        assertEquals(1, handler.connects.get());
        assertEquals(first.lanes(), retry.lanes());
        assertArrayEquals(first.sessionToken(), retry.sessionToken());
        HandshakeResult more = client.connect("initiator", 5, "responder", List.of(ibverbsLane(2, 13)));
        assertEquals(2, handler.connects.get(), "new lanes from the same process are connected");
        assertArrayEquals(first.sessionToken(), more.sessionToken());
    }

    @Test
    void recognisesARestartedInitiatorAndRefusesStaleOnes() {
        HandshakeResult old = client.connect("initiator", 5, "responder", List.of(ibverbsLane(0, 11)));
        HandshakeResult fresh = client.connect("initiator", 6, "responder", List.of(ibverbsLane(0, 21)));
        assertEquals(List.of("initiator:5->6"), handler.restarts);
        assertFalse(java.util.Arrays.equals(old.sessionToken(), fresh.sessionToken()));
        RendezvousException e = assertThrows(
                RendezvousException.class,
                () -> client.connect("initiator", 5, "responder", List.of(ibverbsLane(0, 11))));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.code());
        assertTrue(e.getMessage().contains("older than generation 6"), e.getMessage());
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(() -> client.describe(old, "anything")),
                "the old session token died with the restart");
    }

    @Test
    void refusesCallsMeantForAnotherPeer() {
        RendezvousException e = assertThrows(
                RendezvousException.class,
                () -> client.connect("initiator", 5, "someone-else", List.of(fabricLane(0))));
        assertEquals(Status.Code.FAILED_PRECONDITION, e.code());
        assertTrue(e.getMessage().contains("resolve the peer again"), e.getMessage());
        assertEquals(0, handler.connects.get());
    }

    @Test
    void ignoresLanesOfUnknownBackendsAndValidatesTheRest() {
        ManagedChannel ch = Transport.channel(server.address(), Security.none());
        try {
            var stub = HandshakeGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS);
            Lane future = Lane.newBuilder()
                    .setIndex(3)
                    .setBackendValue(42)
                    .setEndpoint(ByteString.copyFrom(new byte[100]))
                    .setNumaNode(-1)
                    .build();
            var r = stub.connect(ConnectRequest.newBuilder()
                    .setInitiator("mixed")
                    .setGeneration(1)
                    .setResponder("responder")
                    .addLanes(Wire.toProto(ibverbsLane(0, 1)))
                    .addLanes(future)
                    .build());
            assertEquals(1, r.getLanesCount());
            assertEquals(List.of(ibverbsLane(0, 1)), handler.offered.getLast());

            StatusRuntimeException onlyUnknown = assertThrows(
                    StatusRuntimeException.class,
                    () -> stub.connect(ConnectRequest.newBuilder()
                            .setInitiator("future")
                            .setGeneration(1)
                            .addLanes(future)
                            .build()));
            assertEquals(
                    Status.Code.FAILED_PRECONDITION, onlyUnknown.getStatus().getCode());

            Lane shortQp = Wire.toProto(ibverbsLane(0, 1)).toBuilder()
                    .setEndpoint(ByteString.copyFrom(new byte[27]))
                    .build();
            StatusRuntimeException bad = assertThrows(
                    StatusRuntimeException.class,
                    () -> stub.connect(ConnectRequest.newBuilder()
                            .setInitiator("broken")
                            .setGeneration(1)
                            .addLanes(shortQp)
                            .build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, bad.getStatus().getCode());
            assertTrue(
                    bad.getStatus().getDescription().contains("28-byte QPInfo"),
                    bad.getStatus().getDescription());

            StatusRuntimeException none = assertThrows(
                    StatusRuntimeException.class,
                    () -> stub.connect(ConnectRequest.newBuilder()
                            .setInitiator("empty")
                            .setGeneration(1)
                            .build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, none.getStatus().getCode());
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    void mapsHandlerFailuresToStatusesAndKeepsServing() {
        handler.failWith = new IllegalArgumentException("endpoint address family 7 is not supported");
        RendezvousException bad = assertThrows(
                RendezvousException.class, () -> client.connect("i", 1, "responder", List.of(fabricLane(0))));
        assertEquals(Status.Code.INVALID_ARGUMENT, bad.code());
        assertTrue(bad.getMessage().contains("address family 7"), bad.getMessage());
        handler.failWith = new IllegalStateException("device mlx5_0 is gone");
        RendezvousException internal = assertThrows(
                RendezvousException.class, () -> client.connect("i", 1, "responder", List.of(fabricLane(0))));
        assertEquals(Status.Code.INTERNAL, internal.code());
        assertTrue(internal.getMessage().contains("mlx5_0 is gone"), internal.getMessage());
        handler.failWith = null;
        assertEquals(
                1,
                client.connect("i", 1, "responder", List.of(fabricLane(0)))
                        .lanes()
                        .size());
    }

    @Test
    void describesBuffersOnlyToConnectedPeersOnTheAccessList() {
        handler.buffers.put("open", Fixtures.buffer("open", 2));
        handler.buffers.put("mine", Fixtures.buffer("mine", 1).withAccess(Set.of("initiator")));
        handler.buffers.put("theirs", Fixtures.buffer("theirs", 1).withAccess(Set.of("someone")));
        HandshakeResult forged = new HandshakeResult("initiator", "responder", 77, List.of(), new byte[16]);
        assertEquals(Status.Code.PERMISSION_DENIED, code(() -> client.describe(forged, "open")));

        HandshakeResult s = client.connect("initiator", 5, "responder", List.of(ibverbsLane(0, 11)));
        BufferInfo open = client.describe(s, "open").orElseThrow();
        assertEquals("responder", open.owner());
        assertEquals(Fixtures.buffer("open", 2).lanes(), open.lanes());
        assertEquals(
                Set.of("initiator"), client.describe(s, "mine").orElseThrow().access());
        RendezvousException denied = assertThrows(RendezvousException.class, () -> client.describe(s, "theirs"));
        assertEquals(Status.Code.PERMISSION_DENIED, denied.code());
        assertTrue(client.describe(s, "missing").isEmpty());
    }

    @Test
    void handshakeOverTcpNeedsTheToken() {
        try (HandshakeServer tcp = HandshakeServer.builder("responder", 1, handler)
                        .bindAddress("127.0.0.1")
                        .security(Security.token("hs-token"))
                        .start();
                HandshakeClient wrong = Fixtures.handshakeClient(tcp.address(), Security.token("nope"));
                HandshakeClient right = Fixtures.handshakeClient(tcp.address(), Security.token("hs-token"))) {
            assertEquals(
                    Status.Code.UNAUTHENTICATED,
                    code(() -> wrong.connect("i", 1, "responder", List.of(fabricLane(0)))));
            assertEquals(0, handler.connects.get());
            assertEquals(
                    1,
                    right.connect("i", 1, "responder", List.of(fabricLane(0)))
                            .lanes()
                            .size());
        }
    }

    @Test
    void anIdenticalConnectAfterTheResponderAnnouncedAgainIsAnsweredAfresh() {
        List<LaneInfo> lanes = List.of(fabricLane(0));
        HandshakeResult first = client.connect("initiator", 5, "responder", lanes);
        server.renewSessions();
        HandshakeResult again = client.connect("initiator", 5, "responder", lanes);
        assertEquals(2, handler.connects.get(), "the repeated connect reached the handler");
        assertArrayEquals(first.sessionToken(), again.sessionToken(), "the same process keeps its session token");
        assertEquals(List.of(), handler.restarts, "the same generation is no restart");
        client.connect("initiator", 5, "responder", lanes);
        assertEquals(2, handler.connects.get(), "a retry of the fresh answer is replayed again");
        assertEquals(1, server.initiators());
    }

    @Test
    void aConnectAfterTheInitiatorHeardOfItsLapseIsNoRetry() {
        List<LaneInfo> lanes = List.of(fabricLane(0));
        client.connect("initiator", 5, "responder", lanes);
        client.connect("initiator", 5, 4242, "responder", lanes);
        client.connect("initiator", 5, 4242, "responder", lanes);
        assertEquals(List.of(0L, 4242L), handler.lapses, "the handler is told the lapse, once: the repeat is a retry");
        assertEquals(2, handler.connects.get());
    }

    @Test
    void forgetsInitiatorsThatLeft() {
        client.connect("leaver", 9, "responder", List.of(fabricLane(0)));
        assertEquals(1, server.initiators());
        server.forget("leaver");
        assertEquals(0, server.initiators());
        // with its state gone, even a lower generation is a fresh start rather than a stale caller
        assertEquals(
                1,
                client.connect("leaver", 3, "responder", List.of(fabricLane(0)))
                        .lanes()
                        .size());
        assertEquals(2, handler.connects.get());
    }

    @Test
    void advertisesAReachableHostWhenBoundToAllInterfaces() throws Exception {
        try (HandshakeServer wild = HandshakeServer.builder("responder", 1, handler)
                        .security(Security.token("t"))
                        .advertiseHost("127.0.0.1")
                        .start();
                HandshakeClient c = Fixtures.handshakeClient(wild.address(), Security.token("t"))) {
            assertTrue(wild.address().startsWith("127.0.0.1:"), wild.address());
            assertTrue(wild.description().startsWith("0.0.0.0:"), wild.description());
            assertEquals(
                    1,
                    c.connect("i", 1, "responder", List.of(fabricLane(0)))
                            .lanes()
                            .size());
        }
        try (HandshakeServer wild = HandshakeServer.builder("responder", 1, handler)
                .security(Security.token("t"))
                .start()) {
            assertTrue(
                    wild.address()
                            .startsWith(java.net.InetAddress.getLocalHost().getHostName() + ":"),
                    wild.address());
        }
    }
}
