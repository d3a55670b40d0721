package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.ConnectRequest;
import io.rdma4j.proto.v1.ConnectResponse;
import io.rdma4j.proto.v1.DescribeRequest;
import io.rdma4j.proto.v1.DescribeResponse;
import io.rdma4j.proto.v1.HandshakeGrpc;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.HandshakeHandler;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LanePairing;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Handshake protocol around an engine's {@link HandshakeHandler}: validation, idempotent retries (the answer to a
 * request is kept per initiator and replayed for an identical request), initiator generations, session tokens for
 * Describe, and buffer access lists.
 */
public final class HandshakeService extends HandshakeGrpc.HandshakeImplBase {
    /** What one initiator connected, answered while this peer's announcement {@code epoch} stood. */
    private record Session(long generation, byte[] requestDigest, ConnectResponse response, byte[] token, long epoch) {}

    private final String localName;
    private final long generation;
    private final HandshakeHandler handler;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    /** Counts this peer's announcements; a session is replayed only within the one it was answered in. */
    private final AtomicLong epoch = new AtomicLong();

    private final Object[] locks =
            new Object[64]; // striped by initiator: a map of per-name locks would grow with every name tried
    private final int maxInitiators;

    private final boolean bindNamesToCertificates;

    /**
     * @param bindNamesToCertificates accept only initiators whose client certificate covers their name (see
     *     {@link CertificateNames})
     */
    public HandshakeService(
            String localName,
            long generation,
            HandshakeHandler handler,
            int maxInitiators,
            boolean bindNamesToCertificates) {
        this.bindNamesToCertificates = bindNamesToCertificates;
        Validation.name("local peer name", localName);
        this.localName = localName;
        this.generation = generation;
        this.handler = handler;
        this.maxInitiators = maxInitiators;
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new Object();
        }
    }

    /** Forgets what was connected with {@code initiator} (it left the cluster); its next Connect starts afresh. */
    public void forget(String initiator) {
        synchronized (locks[Math.floorMod(initiator.hashCode(), locks.length)]) {
            sessions.remove(initiator);
        }
    }

    /** Forgets every initiator: this peer's lease lapsed, so each dropped what it had connected with us. */
    public void forgetAll() {
        for (String initiator : List.copyOf(sessions.keySet())) {
            forget(initiator);
        }
    }

    /**
     * This peer is announcing itself again: an initiator's next Connect is answered afresh even when it repeats its
     * last one, because the initiator may have dropped (on seeing this peer's lease lapse) what that answer gave it.
     * What was connected stays until then, for initiators that dropped nothing (the directory had restarted).
     */
    public void renewSessions() {
        epoch.incrementAndGet();
    }

    /** @return initiators currently remembered */
    public int initiators() {
        return sessions.size();
    }

    @Override
    public void connect(ConnectRequest request, StreamObserver<ConnectResponse> out) {
        Calls.unary(out, () -> {
            Validation.name("connect initiator", request.getInitiator());
            if (bindNamesToCertificates) {
                CertificateNames.require("initiator", request.getInitiator());
            }
            if (!request.getResponder().isEmpty() && !request.getResponder().equals(localName)) {
                throw Status.FAILED_PRECONDITION
                        .withDescription("this is peer '" + localName + "', not '" + request.getResponder()
                                + "': the address is stale; resolve the peer again")
                        .asRuntimeException();
            }
            Validation.lanes("connect from " + request.getInitiator(), request.getLanesList(), false);
            List<LaneInfo> known = Wire.knownLanes(request.getLanesList());
            if (known.isEmpty()) {
                throw Status.FAILED_PRECONDITION
                        .withDescription("none of the " + request.getLanesCount() + " lanes offered by '"
                                + request.getInitiator() + "' uses a backend this peer knows")
                        .asRuntimeException();
            }
            byte[] digest = digest(request);
            Object lock = locks[Math.floorMod(request.getInitiator().hashCode(), locks.length)];
            synchronized (lock) {
                Session s = sessions.get(request.getInitiator());
                if (s == null && sessions.size() >= maxInitiators) {
                    throw Status.RESOURCE_EXHAUSTED
                            .withDescription("this peer serves its limit of " + maxInitiators + " initiators")
                            .asRuntimeException();
                }
                if (s != null) {
                    if (Long.compareUnsigned(request.getGeneration(), s.generation()) < 0) {
                        throw Status.FAILED_PRECONDITION
                                .withDescription("initiator '" + request.getInitiator() + "' generation "
                                        + request.getGeneration() + " is older than generation " + s.generation()
                                        + " already connected: a stale process is calling")
                                .asRuntimeException();
                    }
                    if (request.getGeneration() == s.generation()
                            && s.epoch() == epoch.get()
                            && MessageDigest.isEqual(digest, s.requestDigest())) {
                        return s.response(); // a retry: same answer, no new endpoints
                    }
                    if (request.getGeneration() != s.generation()) {
                        handler.peerRestarted(request.getInitiator(), s.generation(), request.getGeneration());
                    }
                }
                List<LanePairing> pairs = handler.connect(
                        request.getInitiator(), request.getGeneration(), request.getLapseRevision(), known);
                Set<Integer> offered = new HashSet<>();
                known.forEach(l -> offered.add(l.index()));
                ConnectResponse.Builder b =
                        ConnectResponse.newBuilder().setResponder(localName).setGeneration(generation);
                for (LanePairing p : pairs) {
                    if (!offered.contains(p.initiatorLane())) {
                        throw Status.INTERNAL
                                .withDescription("handshake handler paired lane " + p.initiatorLane()
                                        + ", which the initiator did not offer")
                                .asRuntimeException();
                    }
                    Lane lane = Wire.toProto(p.responderLane());
                    Validation.lane("handler's lane " + p.responderLane().index(), lane);
                    b.addLanes(io.rdma4j.proto.v1.LanePair.newBuilder()
                            .setInitiatorLane(p.initiatorLane())
                            .setResponderLane(lane));
                }
                byte[] token = s != null && s.generation() == request.getGeneration() ? s.token() : Calls.newToken();
                ConnectResponse response =
                        b.setSessionToken(ByteString.copyFrom(token)).build();
                sessions.put(
                        request.getInitiator(),
                        new Session(request.getGeneration(), digest, response, token, epoch.get()));
                return response;
            }
        });
    }

    @Override
    public void describe(DescribeRequest request, StreamObserver<DescribeResponse> out) {
        Calls.unary(out, () -> {
            Validation.name("describe initiator", request.getInitiator());
            Validation.token("describe session_token", request.getSessionToken());
            Validation.name("describe name", request.getName());
            Session s = sessions.get(request.getInitiator());
            if (s == null || !Calls.tokenMatches(s.token(), request.getSessionToken())) {
                throw Status.PERMISSION_DENIED
                        .withDescription("initiator '" + request.getInitiator()
                                + "' has no connection with this session token: connect first")
                        .asRuntimeException();
            }
            Optional<BufferInfo> found = handler.describe(request.getName());
            if (found.isEmpty()) {
                throw Status.NOT_FOUND
                        .withDescription("peer '" + localName + "' has no buffer named '" + request.getName() + "'")
                        .asRuntimeException();
            }
            BufferInfo info = found.get();
            if (!info.access().isEmpty() && !info.access().contains(request.getInitiator())) {
                throw Status.PERMISSION_DENIED
                        .withDescription("peer '" + request.getInitiator() + "' is not on the access list of buffer '"
                                + request.getName() + "'")
                        .asRuntimeException();
            }
            Buffer b = Wire.toProto(info).toBuilder().setOwner(localName).build();
            Validation.buffer(b, null);
            return DescribeResponse.newBuilder().setBuffer(b).build();
        });
    }

    private static byte[] digest(ConnectRequest r) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(r.toByteArray());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
