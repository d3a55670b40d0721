package io.rdma4j.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.AnnounceResponse;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.proto.v1.PublishRequest;
import io.rdma4j.rendezvous.internal.RawBytes;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Wire;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Untrusted input over real loopback TCP: malformed, oversized and out-of-limit messages get precise statuses, and the
 * server keeps serving.
 */
class MessageValidationTest {
    private static DirectoryServer server;
    private static ManagedChannel channel;
    private static DirectoryGrpc.DirectoryBlockingStub stub;

    @BeforeAll
    static void start() {
        server = DirectoryServer.builder().port(0).start();
        channel = Transport.channel(server.target(), Security.none());
        stub = DirectoryGrpc.newBlockingStub(channel);
    }

    @AfterAll
    static void stop() {
        channel.shutdownNow();
        server.close();
    }

    private static DirectoryGrpc.DirectoryBlockingStub call() {
        return stub.withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static StatusRuntimeException failure(Runnable r) {
        try {
            r.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call succeeded");
    }

    private static void assertServing() {
        AnnounceResponse ok = call().announce(AnnounceRequest.newBuilder()
                .setPeer(Wire.toProto(Fixtures.peer("still-alive", 1)))
                .build());
        assertEquals(16, ok.getLeaseToken().size());
    }

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = RawBytes.MARSHALLER;

    private static Status.Code sendRaw(byte[] body) {
        Status s = sendRawStatus(body);
        assertTrue(s.getDescription().startsWith("malformed rdma4j.v1.Directory/Announce request"), s.toString());
        return s.getCode();
    }

    private static Status sendRawStatus(byte[] body) {
        MethodDescriptor<byte[], byte[]> announce = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(DirectoryGrpc.getAnnounceMethod().getFullMethodName())
                .setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES)
                .build();
        try {
            ClientCalls.blockingUnaryCall(
                    channel, announce, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), body);
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
        throw new AssertionError("malformed bytes were accepted");
    }

    @Test
    void rejectsBytesThatAreNotProtobuf() {
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                sendRaw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f}));
        // field 1 (peer), length 50, but only 2 bytes follow: truncated
        assertEquals(Status.Code.INVALID_ARGUMENT, sendRaw(new byte[] {0x0a, 50, 0x0a, 0x00}));
        // peer.name with invalid UTF-8
        assertEquals(Status.Code.INVALID_ARGUMENT, sendRaw(new byte[] {0x0a, 4, 0x0a, 2, (byte) 0xc3, 0x28}));
        assertServing();
    }

    @Test
    void rejectsMessagesOverTheSizeLimit() {
        Lane huge = Wire.toProto(Fixtures.fabricLane(0)).toBuilder()
                .setEndpoint(ByteString.copyFrom(new byte[2 << 20]))
                .build();
        StatusRuntimeException e = failure(() -> call().announce(AnnounceRequest.newBuilder()
                .setPeer(Peer.newBuilder().setName("big").addLanes(huge))
                .build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode());
        assertServing();
    }

    private static Peer validPeer() {
        return Wire.toProto(Fixtures.peer("victim-of-mutation", 2));
    }

    @Test
    void rejectsEveryOutOfContractPeerFieldWithInvalidArgument() {
        Map<String, UnaryOperator<Peer.Builder>> mutations = new LinkedHashMap<>();
        mutations.put("name", p -> p.setName(""));
        mutations.put("name", p -> p.setName("has space"));
        mutations.put("name is", p -> p.setName("n".repeat(129)));
        mutations.put("name '", p -> p.setName("-leading-dash"));
        mutations.put("handshake_address", p -> p.setHandshakeAddress("a b:1"));
        mutations.put("peer.host is", p -> p.setHost("h".repeat(300)));
        mutations.put("65 lanes", p -> {
            p.clearLanes();
            for (int i = 0; i < 65; i++) {
                p.addLanes(Wire.toProto(Fixtures.fabricLane(i)));
            }
            return p;
        });
        mutations.put("twice", p -> p.addLanes(Wire.toProto(Fixtures.fabricLane(0))));
        mutations.put(
                "28-byte QPInfo",
                p -> p.setLanes(0, p.getLanes(0).toBuilder().setEndpoint(ByteString.copyFrom(new byte[27]))));
        mutations.put(
                "endpoint is 0 bytes",
                p -> p.setLanes(1, p.getLanes(1).toBuilder().setEndpoint(ByteString.EMPTY)));
        mutations.put(
                "endpoint is 513 bytes",
                p -> p.setLanes(1, p.getLanes(1).toBuilder().setEndpoint(ByteString.copyFrom(new byte[513]))));
        mutations.put(
                "PCI address", p -> p.setLanes(0, p.getLanes(0).toBuilder().setPciAddress("3b:00.0")));
        mutations.put(
                "numa_node is -2", p -> p.setLanes(0, p.getLanes(0).toBuilder().setNumaNode(-2)));
        mutations.put(
                "control character",
                p -> p.setLanes(0, p.getLanes(0).toBuilder().setDevice("mlx5\n0")));
        mutations.put(
                "backend_id is empty and",
                p -> p.setLanes(0, p.getLanes(0).toBuilder().setBackendValue(0).clearBackendId()));
        mutations.put(
                "backend is BACKEND_OTHER",
                p -> p.setLanes(
                        1,
                        p.getLanes(1).toBuilder()
                                .setBackend(io.rdma4j.proto.v1.Backend.BACKEND_OTHER)
                                .clearBackendId()));
        mutations.put(
                "backend_id is 33 characters",
                p -> p.setLanes(
                        1,
                        p.getLanes(1).toBuilder()
                                .setBackend(io.rdma4j.proto.v1.Backend.BACKEND_OTHER)
                                .setBackendId("n".repeat(33))));
        mutations.put(
                "backend_id 'No-Op' is not a backend id",
                p -> p.setLanes(
                        1,
                        p.getLanes(1).toBuilder()
                                .setBackend(io.rdma4j.proto.v1.Backend.BACKEND_OTHER)
                                .setBackendId("No-Op")));
        mutations.put(
                "backend_id 'no op' is not",
                p -> p.setLanes(
                        1,
                        p.getLanes(1).toBuilder()
                                .setBackend(io.rdma4j.proto.v1.Backend.BACKEND_OTHER)
                                .setBackendId("no op")));
        mutations.put(
                "must name the same backend",
                p -> p.setLanes(0, p.getLanes(0).toBuilder().setBackendId("noop")));
        mutations.put(
                "index is 5000", p -> p.setLanes(0, p.getLanes(0).toBuilder().setIndex(5000)));
        List<String> failures = new ArrayList<>();
        for (var m : mutations.entrySet()) {
            Peer bad = m.getValue().apply(validPeer().toBuilder()).build();
            StatusRuntimeException e = failure(() ->
                    call().announce(AnnounceRequest.newBuilder().setPeer(bad).build()));
            if (e.getStatus().getCode() != Status.Code.INVALID_ARGUMENT
                    || !e.getStatus().getDescription().contains(m.getKey())) {
                failures.add(m.getKey() + " -> " + e.getStatus());
            }
        }
        assertEquals(Collections.emptyList(), failures);
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                failure(() -> call().announce(AnnounceRequest.getDefaultInstance()))
                        .getStatus()
                        .getCode());
        assertServing();
    }

    @Test
    void rejectsEveryOutOfContractBufferFieldWithInvalidArgument() {
        AnnounceResponse owner = call().announce(AnnounceRequest.newBuilder()
                .setPeer(Wire.toProto(Fixtures.peer("buffer-owner", 2)))
                .build());
        Buffer good = Wire.toProto(Fixtures.buffer("good-buffer", 2));
        call().publish(PublishRequest.newBuilder()
                .setOwner("buffer-owner")
                .setLeaseToken(owner.getLeaseToken())
                .setBuffer(good)
                .build());
        Map<String, UnaryOperator<Buffer.Builder>> mutations = new LinkedHashMap<>();
        mutations.put("buffer.name", b -> b.setName("no spaces allowed"));
        mutations.put("length must be > 0", b -> b.setLength(0));
        mutations.put("length must be > 0 and < 2^63", b -> b.setLength(-1L));
        mutations.put("memory_kind is unspecified", b -> b.setMemoryKindValue(0));
        mutations.put("0 lane keys", b -> b.clearLanes());
        mutations.put("lane 0 twice", b -> b.addLanes(b.getLanes(0)));
        mutations.put(
                "lane 9",
                b -> b.addLanes(io.rdma4j.proto.v1.LaneKey.newBuilder().setLane(9)));
        mutations.put("access list has 1025", b -> {
            for (int i = 0; i < 1025; i++) {
                b.addAccess("p" + i);
            }
            return b;
        });
        mutations.put("access entry", b -> b.addAccess("bad name"));
        mutations.put(
                "device_ordinal", b -> b.setLocality(b.getLocality().toBuilder().setDeviceOrdinal(-5)));
        mutations.put("names owner", b -> b.setOwner("someone-else"));
        List<String> failures = new ArrayList<>();
        for (var m : mutations.entrySet()) {
            Buffer bad = m.getValue().apply(good.toBuilder()).build();
            StatusRuntimeException e = failure(() -> call().publish(PublishRequest.newBuilder()
                    .setOwner("buffer-owner")
                    .setLeaseToken(owner.getLeaseToken())
                    .setBuffer(bad)
                    .build()));
            if (e.getStatus().getCode() != Status.Code.INVALID_ARGUMENT
                    || !e.getStatus().getDescription().contains(m.getKey())) {
                failures.add(m.getKey() + " -> " + e.getStatus());
            }
        }
        assertEquals(Collections.emptyList(), failures);
        assertTrue(call().lookup(io.rdma4j.proto.v1.LookupRequest.newBuilder()
                        .setName("good-buffer")
                        .build())
                .hasBuffer());
        assertServing();
    }
}
