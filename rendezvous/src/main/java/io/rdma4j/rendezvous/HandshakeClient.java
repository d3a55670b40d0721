package io.rdma4j.rendezvous;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.ConnectRequest;
import io.rdma4j.proto.v1.ConnectResponse;
import io.rdma4j.proto.v1.DescribeRequest;
import io.rdma4j.proto.v1.HandshakeGrpc;
import io.rdma4j.proto.v1.LanePair;
import io.rdma4j.rendezvous.internal.ClientErrors;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Validation;
import io.rdma4j.rendezvous.internal.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Calls a peer's {@link HandshakeServer}. Answers are untrusted: they are validated, and lanes of backends this version
 * does not know are dropped. {@link #connect} may be retried freely: the responder answers a repeated request the same
 * way without creating endpoints twice.
 */
public final class HandshakeClient implements AutoCloseable {
    private final String address;
    private final ManagedChannel channel;
    private final HandshakeGrpc.HandshakeBlockingStub stub;
    private final Duration callTimeout;

    private HandshakeClient(String address, Security security, Duration callTimeout) {
        this.address = Objects.requireNonNull(address, "address");
        if (callTimeout.isNegative() || callTimeout.isZero()) {
            throw new IllegalArgumentException("callTimeout must be > 0, got " + callTimeout);
        }
        this.callTimeout = callTimeout;
        this.channel = Transport.channel(address, security);
        this.stub = HandshakeGrpc.newBlockingStub(channel);
    }

    /** @param address the peer's {@link PeerInfo#handshakeAddress()} */
    public static HandshakeClient connect(String address, Security security) {
        return new HandshakeClient(address, security, Rendezvous.DEFAULT_CALL_TIMEOUT);
    }

    public static HandshakeClient connect(String address, Security security, Duration callTimeout) {
        return new HandshakeClient(address, security, callTimeout);
    }

    private HandshakeGrpc.HandshakeBlockingStub stub() {
        return stub.withDeadlineAfter(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Offers {@code lanes} (with this side's endpoint bytes) to the responder and returns its lanes paired with them.
     *
     * @param initiator this peer's name
     * @param generation this process's generation
     * @param responder the peer meant (its name as resolved); a responder with another name refuses
     * @throws RendezvousException FAILED_PRECONDITION for a stale generation or a different responder, INVALID_ARGUMENT
     *     when the responder rejects the endpoint bytes
     */
    public HandshakeResult connect(String initiator, long generation, String responder, List<LaneInfo> lanes) {
        return connect(initiator, generation, 0, responder, lanes);
    }

    /**
     * Connects as {@link #connect(String, long, String, List)} does, saying that the caller last heard of its own lease
     * lapsing at the directory's {@code lapseRevision} (0: never): a responder that hears of that lapse only after this
     * connect keeps what it gave for it, and a repeat of the connect made before the lapse is no retry of this one.
     */
    public HandshakeResult connect(
            String initiator, long generation, long lapseRevision, String responder, List<LaneInfo> lanes) {
        Rendezvous.checkName("initiator", initiator);
        Rendezvous.checkName("responder", responder);
        if (lanes.isEmpty() || lanes.size() > Validation.MAX_LANES) {
            throw new IllegalArgumentException(
                    "connect needs 1.." + Validation.MAX_LANES + " lanes, got " + lanes.size());
        }
        ConnectRequest.Builder b = ConnectRequest.newBuilder()
                .setInitiator(initiator)
                .setGeneration(generation)
                .setResponder(responder)
                .setLapseRevision(lapseRevision);
        lanes.forEach(l -> b.addLanes(Wire.toProto(l)));
        ConnectResponse r;
        try {
            r = stub().connect(b.build());
        } catch (StatusRuntimeException e) {
            throw ClientErrors.of("handshake service of " + responder, address, "connect", e);
        }
        try {
            if (!r.getResponder().equals(responder)) {
                throw Validation.invalid("answer comes from '" + r.getResponder() + "', not '" + responder + "'");
            }
            Validation.token("session_token", r.getSessionToken());
            List<LanePairing> pairs = new ArrayList<>(r.getLanesCount());
            for (LanePair p : r.getLanesList()) {
                Validation.lane("responder lane", p.getResponderLane());
                Wire.fromProto(p.getResponderLane())
                        .ifPresent(l -> pairs.add(new LanePairing(p.getInitiatorLane(), l)));
            }
            return new HandshakeResult(
                    initiator,
                    r.getResponder(),
                    r.getGeneration(),
                    pairs,
                    r.getSessionToken().toByteArray());
        } catch (StatusRuntimeException e) {
            throw new RendezvousException(
                    Status.Code.INVALID_ARGUMENT,
                    "handshake service of " + responder + " at " + address + " sent a malformed answer: "
                            + e.getStatus().getDescription(),
                    e);
        }
    }

    /**
     * Asks the responder of {@code session} for a buffer's description and keys directly, without a directory.
     *
     * @return the buffer, or empty when the responder has none by that name
     * @throws RendezvousException PERMISSION_DENIED when its access list does not name the initiator
     */
    public Optional<BufferInfo> describe(HandshakeResult session, String name) {
        Rendezvous.checkName("buffer name", name);
        try {
            var r = stub().describe(DescribeRequest.newBuilder()
                    .setInitiator(session.initiator())
                    .setSessionToken(ByteString.copyFrom(session.sessionToken()))
                    .setName(name)
                    .build());
            try {
                Validation.buffer(r.getBuffer(), null);
                return Optional.of(Wire.fromProto(r.getBuffer()));
            } catch (StatusRuntimeException | IllegalArgumentException e) {
                throw new RendezvousException(
                        Status.Code.INVALID_ARGUMENT,
                        "handshake service of " + session.responder() + " at " + address + " sent a malformed buffer: "
                                + e.getMessage(),
                        e);
            }
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return Optional.empty();
            }
            throw ClientErrors.of("handshake service of " + session.responder(), address, "describe(" + name + ")", e);
        }
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
