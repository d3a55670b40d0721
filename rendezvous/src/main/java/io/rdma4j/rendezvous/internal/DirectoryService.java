package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.AnnounceResponse;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.proto.v1.HeartbeatRequest;
import io.rdma4j.proto.v1.HeartbeatResponse;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.proto.v1.ListRequest;
import io.rdma4j.proto.v1.ListResponse;
import io.rdma4j.proto.v1.LookupRequest;
import io.rdma4j.proto.v1.LookupResponse;
import io.rdma4j.proto.v1.MembershipEvent;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.proto.v1.PublishRequest;
import io.rdma4j.proto.v1.PublishResponse;
import io.rdma4j.proto.v1.ResolveRequest;
import io.rdma4j.proto.v1.ResolveResponse;
import io.rdma4j.proto.v1.UnpublishRequest;
import io.rdma4j.proto.v1.UnpublishResponse;
import io.rdma4j.proto.v1.WatchRequest;
import io.rdma4j.proto.v1.WithdrawRequest;
import io.rdma4j.proto.v1.WithdrawResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The directory: peers under leases, their published buffers, and watchers. All state is soft: it is rebuilt from the
 * peers' re-announcements after a restart. Mutations take one lock (they are short and keep events in order); reads
 * (resolve, lookup, list) take none.
 */
public final class DirectoryService extends DirectoryGrpc.DirectoryImplBase {
    /**
     * Capacity and lease limits.
     *
     * @param minLeaseNanos shortest lease granted
     * @param maxLeaseNanos longest lease granted
     * @param defaultLeaseNanos lease when a peer asks for 0
     * @param maxPeers peers held at once
     * @param maxBuffers buffers held at once
     * @param maxBuffersPerPeer buffers one peer may publish
     * @param maxWatchers concurrent watch streams
     * @param maxWatchBacklog events queued for a slow watcher before its stream is ended with RESOURCE_EXHAUSTED
     */
    public record Limits(
            long minLeaseNanos,
            long maxLeaseNanos,
            long defaultLeaseNanos,
            int maxPeers,
            int maxBuffers,
            int maxBuffersPerPeer,
            int maxWatchers,
            int maxWatchBacklog) {
        public static final Limits DEFAULT = new Limits(
                TimeUnit.MILLISECONDS.toNanos(100),
                TimeUnit.MINUTES.toNanos(5),
                TimeUnit.SECONDS.toNanos(10),
                100_000,
                1_000_000,
                100_000,
                4096,
                65_536);
    }

    private static final class PeerEntry {
        final Peer peer;
        final byte[] token;
        final Set<Integer> lanes;
        final long leaseNanos;
        volatile long expiresAt;
        final Set<String> buffers = new HashSet<>(); // guarded by the directory lock

        PeerEntry(Peer peer, byte[] token, long leaseNanos, long expiresAt) {
            this.peer = peer;
            this.token = token;
            this.leaseNanos = leaseNanos;
            this.expiresAt = expiresAt;
            Set<Integer> l = new HashSet<>();
            for (Lane lane : peer.getLanesList()) {
                l.add(lane.getIndex());
            }
            this.lanes = Set.copyOf(l);
        }
    }

    private record BufferEntry(Buffer buffer, PeerEntry owner) {}

    private final Limits limits;
    private final LongSupplier clock;
    private final Object lock = new Object();
    private final ConcurrentSkipListMap<String, PeerEntry> peers = new ConcurrentSkipListMap<>();
    private final Map<String, BufferEntry> buffers = new ConcurrentHashMap<>();
    private final List<Watcher> watchers = new CopyOnWriteArrayList<>();
    private long revision; // guarded by lock

    private final boolean bindNamesToCertificates;

    /**
     * @param clock monotonic nanoseconds ({@code System::nanoTime}); tests pass a clock they advance
     * @param bindNamesToCertificates announce only names the caller's client certificate covers (see
     *     {@link CertificateNames})
     */
    public DirectoryService(Limits limits, LongSupplier clock, boolean bindNamesToCertificates) {
        this.limits = limits;
        this.clock = clock;
        this.bindNamesToCertificates = bindNamesToCertificates;
    }

    private boolean alive(PeerEntry e, long now) {
        return e != null && now - e.expiresAt < 0 && peers.get(e.peer.getName()) == e;
    }

    /** @return the live entry for {@code name} proven by {@code token}; NOT_FOUND / PERMISSION_DENIED otherwise */
    private PeerEntry authorize(String what, String name, ByteString token) {
        Validation.name(what, name);
        Validation.token(what + " lease_token", token);
        PeerEntry e = peers.get(name);
        if (e == null || !alive(e, clock.getAsLong())) {
            throw Status.NOT_FOUND
                    .withDescription("the directory does not know peer '" + name
                            + "' (its lease expired or the directory restarted): announce again")
                    .asRuntimeException();
        }
        if (!Calls.tokenMatches(e.token, token)) {
            throw Status.PERMISSION_DENIED
                    .withDescription("lease token does not match peer '" + name
                            + "': another process announced this name after you")
                    .asRuntimeException();
        }
        return e;
    }

    @Override
    public void announce(AnnounceRequest request, StreamObserver<AnnounceResponse> out) {
        Calls.unary(out, () -> {
            if (!request.hasPeer()) {
                throw Validation.invalid("announce without a peer");
            }
            Peer peer = request.getPeer();
            Validation.peer(peer);
            if (bindNamesToCertificates) {
                CertificateNames.require("peer name", peer.getName());
            }
            long lease = request.getLeaseMillis() == 0
                    ? limits.defaultLeaseNanos()
                    : Math.clamp(
                            TimeUnit.MILLISECONDS.toNanos(request.getLeaseMillis()),
                            limits.minLeaseNanos(),
                            limits.maxLeaseNanos());
            byte[] token = Calls.newToken();
            long rev;
            synchronized (lock) {
                long now = clock.getAsLong();
                PeerEntry old = peers.get(peer.getName());
                boolean oldAlive = alive(old, now);
                if (old == null && peers.size() >= limits.maxPeers()) {
                    throw Status.RESOURCE_EXHAUSTED
                            .withDescription("the directory holds its limit of " + limits.maxPeers() + " peers")
                            .asRuntimeException();
                }
                PeerEntry entry = new PeerEntry(peer, token, lease, now + lease);
                if (old != null) {
                    if (old.peer.getGeneration() == peer.getGeneration()) {
                        // The same process announcing again keeps its buffers where their lanes still exist.
                        for (String b : old.buffers) {
                            BufferEntry be = buffers.get(b);
                            if (be != null
                                    && be.owner() == old
                                    && be.buffer().getLanesList().stream()
                                            .allMatch(k -> entry.lanes.contains(k.getLane()))) {
                                buffers.put(b, new BufferEntry(be.buffer(), entry));
                                entry.buffers.add(b);
                            } else if (be != null && be.owner() == old) {
                                buffers.remove(b);
                            }
                        }
                    } else {
                        dropBuffers(old);
                    }
                }
                peers.put(peer.getName(), entry);
                rev = emit(
                        old == null || !oldAlive ? MembershipEvent.Kind.KIND_JOINED : MembershipEvent.Kind.KIND_UPDATED,
                        peer,
                        MembershipEvent.Reason.REASON_ANNOUNCED);
            }
            return AnnounceResponse.newBuilder()
                    .setLeaseToken(ByteString.copyFrom(token))
                    .setLeaseMillis((int) TimeUnit.NANOSECONDS.toMillis(lease))
                    .setRevision(rev)
                    .build();
        });
    }

    @Override
    public void heartbeat(HeartbeatRequest request, StreamObserver<HeartbeatResponse> out) {
        Calls.unary(out, () -> {
            PeerEntry e;
            try {
                e = authorize("heartbeat name", request.getName(), request.getLeaseToken());
            } catch (StatusRuntimeException ex) {
                if (ex.getStatus().getCode() == Status.Code.NOT_FOUND) {
                    expireLeases(); // an expired entry answers NOT_FOUND; make its departure visible now
                }
                throw ex;
            }
            e.expiresAt = clock.getAsLong() + e.leaseNanos;
            return HeartbeatResponse.newBuilder()
                    .setLeaseMillis((int) TimeUnit.NANOSECONDS.toMillis(e.leaseNanos))
                    .build();
        });
    }

    @Override
    public void withdraw(WithdrawRequest request, StreamObserver<WithdrawResponse> out) {
        Calls.unary(out, () -> {
            PeerEntry e = authorize("withdraw name", request.getName(), request.getLeaseToken());
            synchronized (lock) {
                remove(e, MembershipEvent.Reason.REASON_WITHDRAWN);
            }
            return WithdrawResponse.getDefaultInstance();
        });
    }

    @Override
    public void resolve(ResolveRequest request, StreamObserver<ResolveResponse> out) {
        Calls.unary(out, () -> {
            Validation.name("resolve name", request.getName());
            PeerEntry e = peers.get(request.getName());
            if (!alive(e, clock.getAsLong())) {
                throw Status.NOT_FOUND
                        .withDescription("no peer named '" + request.getName() + "' is announced")
                        .asRuntimeException();
            }
            return ResolveResponse.newBuilder().setPeer(e.peer).build();
        });
    }

    @Override
    public void list(ListRequest request, StreamObserver<ListResponse> out) {
        Calls.unary(out, () -> {
            int page = request.getPageSize() == 0
                    ? Validation.MAX_PAGE_SIZE
                    : Math.min(request.getPageSize(), Validation.MAX_PAGE_SIZE);
            if (!request.getAfter().isEmpty()) {
                Validation.name("list after", request.getAfter());
            }
            Map<String, PeerEntry> tail =
                    request.getAfter().isEmpty() ? peers : peers.tailMap(request.getAfter(), false);
            ListResponse.Builder b = ListResponse.newBuilder();
            long now = clock.getAsLong();
            for (PeerEntry e : tail.values()) {
                if (!alive(e, now)) {
                    continue;
                }
                if (b.getPeersCount() == page) {
                    b.setMore(true);
                    break;
                }
                b.addPeers(e.peer);
            }
            return b.build();
        });
    }

    @Override
    public void watch(WatchRequest request, StreamObserver<MembershipEvent> out) {
        ServerCallStreamObserver<MembershipEvent> call = (ServerCallStreamObserver<MembershipEvent>) out;
        if (watchers.size() >= limits.maxWatchers()) {
            call.onError(Status.RESOURCE_EXHAUSTED
                    .withDescription("the directory serves its limit of " + limits.maxWatchers() + " watchers")
                    .asRuntimeException());
            return;
        }
        Watcher w = new Watcher(call, limits.maxWatchBacklog(), watchers);
        call.setOnCancelHandler(w::cancelled);
        call.setOnReadyHandler(w::drain);
        synchronized (lock) {
            long now = clock.getAsLong();
            for (PeerEntry e : peers.values()) {
                if (alive(e, now)) {
                    w.offer(MembershipEvent.newBuilder()
                            .setKind(MembershipEvent.Kind.KIND_JOINED)
                            .setPeer(e.peer)
                            .setReason(MembershipEvent.Reason.REASON_ANNOUNCED)
                            .setRevision(revision)
                            .build());
                }
            }
            w.offer(MembershipEvent.newBuilder()
                    .setKind(MembershipEvent.Kind.KIND_SYNCED)
                    .setRevision(revision)
                    .build());
            watchers.add(w);
        }
    }

    @Override
    public void publish(PublishRequest request, StreamObserver<PublishResponse> out) {
        Calls.unary(out, () -> {
            PeerEntry owner = authorize("publish owner", request.getOwner(), request.getLeaseToken());
            if (!request.hasBuffer()) {
                throw Validation.invalid("publish without a buffer");
            }
            Buffer b = request.getBuffer();
            Validation.buffer(b, owner.lanes);
            if (!b.getOwner().isEmpty() && !b.getOwner().equals(request.getOwner())) {
                throw Validation.invalid("buffer " + b.getName() + " names owner '" + b.getOwner()
                        + "' but is published by '" + request.getOwner() + "'");
            }
            Buffer stored = b.toBuilder().setOwner(request.getOwner()).build();
            synchronized (lock) {
                if (!alive(owner, clock.getAsLong())) {
                    throw Status.NOT_FOUND
                            .withDescription("peer '" + request.getOwner() + "' left while publishing: announce again")
                            .asRuntimeException();
                }
                BufferEntry existing = buffers.get(b.getName());
                if (existing != null && alive(existing.owner(), clock.getAsLong()) && existing.owner() != owner) {
                    throw Status.ALREADY_EXISTS
                            .withDescription("buffer '" + b.getName() + "' is published by '"
                                    + existing.owner().peer.getName() + "'; pick another name")
                            .asRuntimeException();
                }
                if (existing != null
                        && existing.owner() == owner
                        && existing.buffer().getGeneration() > b.getGeneration()) {
                    throw Status.FAILED_PRECONDITION
                            .withDescription("buffer '" + b.getName() + "' is published at generation "
                                    + existing.buffer().getGeneration() + "; generation " + b.getGeneration()
                                    + " is stale")
                            .asRuntimeException();
                }
                if (existing == null || existing.owner() != owner) {
                    if (buffers.size() >= limits.maxBuffers()) {
                        throw Status.RESOURCE_EXHAUSTED
                                .withDescription("the directory holds its limit of " + limits.maxBuffers() + " buffers")
                                .asRuntimeException();
                    }
                    if (owner.buffers.size() >= limits.maxBuffersPerPeer()) {
                        throw Status.RESOURCE_EXHAUSTED
                                .withDescription("peer '" + request.getOwner() + "' already publishes its limit of "
                                        + limits.maxBuffersPerPeer() + " buffers")
                                .asRuntimeException();
                    }
                }
                if (existing != null && existing.owner() != owner) {
                    existing.owner().buffers.remove(b.getName());
                }
                buffers.put(b.getName(), new BufferEntry(stored, owner));
                owner.buffers.add(b.getName());
            }
            return PublishResponse.getDefaultInstance();
        });
    }

    @Override
    public void lookup(LookupRequest request, StreamObserver<LookupResponse> out) {
        Calls.unary(out, () -> {
            Validation.name("lookup name", request.getName());
            PeerEntry requester = null;
            if (!request.getRequester().isEmpty()) {
                try {
                    requester = authorize("lookup requester", request.getRequester(), request.getLeaseToken());
                } catch (StatusRuntimeException e) {
                    if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                        throw Status.PERMISSION_DENIED
                                .withDescription("requester '" + request.getRequester()
                                        + "' is not announced (lease expired or directory restarted): announce again")
                                .asRuntimeException();
                    }
                    throw e;
                }
            } else if (!request.getLeaseToken().isEmpty()) {
                throw Validation.invalid("lookup carries a lease token but no requester");
            }
            BufferEntry e = buffers.get(request.getName());
            if (e == null || !alive(e.owner(), clock.getAsLong())) {
                throw Status.NOT_FOUND
                        .withDescription("no buffer named '" + request.getName() + "' is published")
                        .asRuntimeException();
            }
            Buffer b = e.buffer();
            if (b.getAccessCount() > 0) {
                if (requester == null) {
                    throw Status.PERMISSION_DENIED
                            .withDescription("buffer '" + b.getName()
                                    + "' has an access list; look it up as an announced peer that is on it")
                            .asRuntimeException();
                }
                if (!b.getAccessList().contains(requester.peer.getName())) {
                    throw Status.PERMISSION_DENIED
                            .withDescription("peer '" + requester.peer.getName()
                                    + "' is not on the access list of buffer '" + b.getName() + "'")
                            .asRuntimeException();
                }
            }
            return LookupResponse.newBuilder().setBuffer(b).build();
        });
    }

    @Override
    public void unpublish(UnpublishRequest request, StreamObserver<UnpublishResponse> out) {
        Calls.unary(out, () -> {
            PeerEntry owner = authorize("unpublish owner", request.getOwner(), request.getLeaseToken());
            Validation.name("unpublish name", request.getName());
            synchronized (lock) {
                BufferEntry e = buffers.get(request.getName());
                if (e == null || !alive(e.owner(), clock.getAsLong())) {
                    throw Status.NOT_FOUND
                            .withDescription("no buffer named '" + request.getName() + "' is published")
                            .asRuntimeException();
                }
                if (e.owner() != owner) {
                    throw Status.PERMISSION_DENIED
                            .withDescription("buffer '" + request.getName() + "' belongs to '"
                                    + e.owner().peer.getName() + "'")
                            .asRuntimeException();
                }
                buffers.remove(request.getName());
                owner.buffers.remove(request.getName());
            }
            return UnpublishResponse.getDefaultInstance();
        });
    }

    /** Removes every peer whose lease has run out, with a LEFT(EXPIRED) event each. @return how many */
    public int expireLeases() {
        int n = 0;
        synchronized (lock) {
            long now = clock.getAsLong();
            for (PeerEntry e : new ArrayList<>(peers.values())) {
                if (now - e.expiresAt >= 0) {
                    remove(e, MembershipEvent.Reason.REASON_EXPIRED);
                    n++;
                }
            }
        }
        return n;
    }

    /** @return peers currently held (including expired ones not yet swept) */
    public int peerCount() {
        return peers.size();
    }

    /** @return buffers currently held */
    public int bufferCount() {
        return buffers.size();
    }

    /** Ends every watch stream (server shutdown). */
    public void closeWatchers() {
        for (Watcher w : watchers) {
            w.fail(Status.UNAVAILABLE.withDescription("the directory is shutting down"));
        }
    }

    private void remove(PeerEntry e, MembershipEvent.Reason reason) {
        if (peers.remove(e.peer.getName(), e)) {
            dropBuffers(e);
            emit(MembershipEvent.Kind.KIND_LEFT, e.peer, reason);
        }
    }

    private void dropBuffers(PeerEntry e) {
        for (String b : e.buffers) {
            buffers.computeIfPresent(b, (k, v) -> v.owner() == e ? null : v);
        }
        e.buffers.clear();
    }

    private long emit(MembershipEvent.Kind kind, Peer peer, MembershipEvent.Reason reason) {
        long rev = ++revision;
        MembershipEvent ev = MembershipEvent.newBuilder()
                .setKind(kind)
                .setPeer(peer)
                .setReason(reason)
                .setRevision(rev)
                .build();
        for (Watcher w : watchers) {
            w.offer(ev);
        }
        return rev;
    }

    /** One watch stream with a bounded backlog, drained as the transport becomes ready. */
    private static final class Watcher {
        private final ServerCallStreamObserver<MembershipEvent> out;
        private final int maxBacklog;
        private final List<Watcher> registry;
        private final ArrayDeque<MembershipEvent> pending = new ArrayDeque<>();
        private boolean done;

        Watcher(ServerCallStreamObserver<MembershipEvent> out, int maxBacklog, List<Watcher> registry) {
            this.out = out;
            this.maxBacklog = maxBacklog;
            this.registry = registry;
        }

        synchronized void offer(MembershipEvent e) {
            if (done) {
                return;
            }
            if (pending.size() >= maxBacklog) {
                fail(Status.RESOURCE_EXHAUSTED.withDescription(
                        "watcher fell " + maxBacklog + " events behind; watch again to resynchronise"));
                return;
            }
            pending.add(e);
            drain();
        }

        synchronized void drain() {
            try {
                while (!done && out.isReady() && !pending.isEmpty()) {
                    out.onNext(pending.poll());
                }
            } catch (RuntimeException e) {
                cancelled();
            }
        }

        synchronized void fail(Status s) {
            if (done) {
                return;
            }
            done = true;
            pending.clear();
            registry.remove(this);
            try {
                out.onError(s.asRuntimeException());
            } catch (RuntimeException ignored) {
                // the call is already closed; nothing to tell
            }
        }

        synchronized void cancelled() {
            done = true;
            pending.clear();
            registry.remove(this);
        }
    }
}
