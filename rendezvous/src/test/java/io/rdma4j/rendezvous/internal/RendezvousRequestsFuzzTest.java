package io.rdma4j.rendezvous.internal;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.AnnounceResponse;
import io.rdma4j.proto.v1.ConnectRequest;
import io.rdma4j.proto.v1.DescribeRequest;
import io.rdma4j.proto.v1.HeartbeatRequest;
import io.rdma4j.proto.v1.LookupRequest;
import io.rdma4j.proto.v1.PublishRequest;
import io.rdma4j.proto.v1.ResolveRequest;
import io.rdma4j.proto.v1.UnpublishRequest;
import io.rdma4j.proto.v1.WithdrawRequest;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.HandshakeHandler;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LanePairing;
import io.rdma4j.rendezvous.QpInfo;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Fuzz targets for what a peer sends the rendezvous services and the handshake: request messages decoded from the wire,
 * run through a fresh directory and handshake service, and the ibverbs endpoint bytes ({@link QpInfo}).
 *
 * <p>A service may refuse a request only with a precise status (INVALID_ARGUMENT, FAILED_PRECONDITION, NOT_FOUND, ...);
 * INTERNAL or UNKNOWN means an exception escaped validation, and is a finding. So is any exception thrown out of a
 * service method. {@code ./rdma4j test} replays the committed inputs under
 * {@code src/test/resources/io/rdma4j/rendezvous/internal/RendezvousRequestsFuzzTestInputs/}.
 */
class RendezvousRequestsFuzzTest {
    /** Answers every handshake by pairing each offered lane with itself, echoed back as the responder's lane. */
    private static final HandshakeHandler ECHO = new HandshakeHandler() {
        @Override
        public List<LanePairing> connect(String initiator, long generation, List<LaneInfo> remoteLanes) {
            return remoteLanes.stream().map(l -> new LanePairing(l.index(), l)).toList();
        }

        @Override
        public Optional<BufferInfo> describe(String name) {
            return Optional.empty();
        }
    };

    /** Records one call's outcome, and fails on a status that says validation let something through. */
    private static final class Outcome<T> implements StreamObserver<T> {
        T value;

        @Override
        public void onNext(T v) {
            value = v;
        }

        @Override
        public void onError(Throwable t) {
            Status.Code code = Status.fromThrowable(t).getCode();
            if (code == Status.Code.INTERNAL || code == Status.Code.UNKNOWN) {
                throw new AssertionError("a request was answered " + code + ", not refused precisely", t);
            }
        }

        @Override
        public void onCompleted() {}
    }

    /**
     * A session of requests against one directory and one handshake service. The input is a sequence of frames: an
     * operation byte, a 16-bit length, then that many bytes of the request message. A publish, heartbeat or withdraw
     * whose lease token is empty gets the token of the latest announce, so that the fuzzer reaches past the token
     * check.
     */
    @FuzzTest(maxDuration = "30s")
    void requests(byte[] input) {
        MemoryStore store = new MemoryStore(System::nanoTime);
        DirectoryService directory = new DirectoryService(DirectoryService.Limits.DEFAULT, store, false);
        HandshakeService handshake = new HandshakeService("fuzz-responder", 7, ECHO, 16, false);
        ByteString lease = ByteString.EMPTY;
        Map<String, ByteString> sessionTokens = new HashMap<>();
        ByteBuffer in = ByteBuffer.wrap(input);
        try {
            while (in.remaining() >= 3) {
                int op = Byte.toUnsignedInt(in.get()) % 10;
                int length = Math.min(Short.toUnsignedInt(in.getShort()), in.remaining());
                byte[] message = new byte[length];
                in.get(message);
                switch (op) {
                    case 0 -> {
                        Outcome<AnnounceResponse> o = new Outcome<>();
                        directory.announce(AnnounceRequest.parseFrom(message), o);
                        if (o.value != null) {
                            lease = o.value.getLeaseToken();
                        }
                    }
                    case 1 -> directory.resolve(ResolveRequest.parseFrom(message), new Outcome<>());
                    case 2 -> {
                        PublishRequest r = PublishRequest.parseFrom(message);
                        if (r.getLeaseToken().isEmpty()) {
                            r = r.toBuilder().setLeaseToken(lease).build();
                        }
                        directory.publish(r, new Outcome<>());
                    }
                    case 3 -> {
                        LookupRequest r = LookupRequest.parseFrom(message);
                        if (r.getLeaseToken().isEmpty()) {
                            r = r.toBuilder().setLeaseToken(lease).build();
                        }
                        directory.lookup(r, new Outcome<>());
                    }
                    case 4 -> {
                        HeartbeatRequest r = HeartbeatRequest.parseFrom(message);
                        if (r.getLeaseToken().isEmpty()) {
                            r = r.toBuilder().setLeaseToken(lease).build();
                        }
                        directory.heartbeat(r, new Outcome<>());
                    }
                    case 5 -> {
                        UnpublishRequest r = UnpublishRequest.parseFrom(message);
                        if (r.getLeaseToken().isEmpty()) {
                            r = r.toBuilder().setLeaseToken(lease).build();
                        }
                        directory.unpublish(r, new Outcome<>());
                    }
                    case 6 -> {
                        WithdrawRequest r = WithdrawRequest.parseFrom(message);
                        if (r.getLeaseToken().isEmpty()) {
                            r = r.toBuilder().setLeaseToken(lease).build();
                        }
                        directory.withdraw(r, new Outcome<>());
                    }
                    case 7, 8 -> {
                        Outcome<io.rdma4j.proto.v1.ConnectResponse> o = new Outcome<>();
                        ConnectRequest r = ConnectRequest.parseFrom(message);
                        handshake.connect(r, o);
                        if (o.value != null) {
                            sessionTokens.put(r.getInitiator(), o.value.getSessionToken());
                        }
                    }
                    default -> {
                        DescribeRequest r = DescribeRequest.parseFrom(message);
                        if (r.getSessionToken().isEmpty()) {
                            r = r.toBuilder()
                                    .setSessionToken(sessionTokens.getOrDefault(r.getInitiator(), ByteString.EMPTY))
                                    .build();
                        }
                        handshake.describe(r, new Outcome<>());
                    }
                }
            }
        } catch (InvalidProtocolBufferException refused) {
            // gRPC's marshaller refuses such a message before any service sees it
        } finally {
            directory.closeWatchers();
            store.close();
        }
    }

    /** The 28 bytes of an ibverbs endpoint a peer sends; any other length is refused with IllegalArgumentException. */
    @FuzzTest(maxDuration = "30s")
    void qpInfo(byte[] input) {
        try {
            QpInfo q = QpInfo.decode(input);
            if (!QpInfo.decode(q.encode()).equals(q)) {
                throw new AssertionError("QpInfo does not survive encode and decode: " + q);
            }
        } catch (IllegalArgumentException refused) {
            // the documented refusal
        }
    }
}
