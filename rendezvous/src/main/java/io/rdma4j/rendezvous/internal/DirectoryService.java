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
import io.rdma4j.proto.v1.PeerState;
import io.rdma4j.proto.v1.PublishRequest;
import io.rdma4j.proto.v1.PublishResponse;
import io.rdma4j.proto.v1.ResolveRequest;
import io.rdma4j.proto.v1.ResolveResponse;
import io.rdma4j.proto.v1.UnpublishRequest;
import io.rdma4j.proto.v1.UnpublishResponse;
import io.rdma4j.proto.v1.WatchRequest;
import io.rdma4j.proto.v1.WithdrawRequest;
import io.rdma4j.proto.v1.WithdrawResponse;
import io.rdma4j.rendezvous.store.DirectoryStore;
import io.rdma4j.rendezvous.store.DirectoryStore.StoredBuffer;
import io.rdma4j.rendezvous.store.DirectoryStore.StoredPeer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The directory's calls: validation, tokens, leases, generations, access lists and watch streams, over a
 * {@link DirectoryStore} that holds the state (in this JVM, or in etcd shared by several directory processes). Changes
 * are compare-and-swaps on what was read, retried when another process changed the same name in between.
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

    /** Compare-and-swap rounds before a contended change gives up with ABORTED. */
    private static final int MAX_ATTEMPTS = 16;

    private final Limits limits;
    private final DirectoryStore store;
    private final List<Watcher> watchers = new CopyOnWriteArrayList<>();
    private final boolean bindNamesToCertificates;
    private final DirectoryMetrics metrics;

    /**
     * @param store where peers and buffers are kept; this service only validates, authorizes and decides, so any number
     *     of services may share one store
     * @param bindNamesToCertificates announce only names the caller's client certificate covers (see
     *     {@link CertificateNames})
     */
    public DirectoryService(Limits limits, DirectoryStore store, boolean bindNamesToCertificates) {
        this(limits, store, bindNamesToCertificates, DirectoryMetrics.OFF);
    }

    /** @param metrics counts resolves and leases ({@link DirectoryMetrics#OFF}: none) */
    public DirectoryService(
            Limits limits, DirectoryStore store, boolean bindNamesToCertificates, DirectoryMetrics metrics) {
        this.limits = limits;
        this.store = store;
        this.bindNamesToCertificates = bindNamesToCertificates;
        this.metrics = metrics;
    }

    /**
     * @return the live announcement of {@code name} proven by {@code token}; NOT_FOUND / PERMISSION_DENIED otherwise
     */
    private StoredPeer authorize(String what, String name, ByteString token) {
        Validation.name(what, name);
        Validation.token(what + " lease_token", token);
        StoredPeer e = store.peer(name)
                .orElseThrow(() -> Status.NOT_FOUND
                        .withDescription("the directory does not know peer '" + name
                                + "' (its lease expired or the directory restarted): announce again")
                        .asRuntimeException());
        if (!Calls.tokenMatches(e.token().toByteArray(), token)) {
            throw Status.PERMISSION_DENIED
                    .withDescription("lease token does not match peer '" + name
                            + "': another process announced this name after you")
                    .asRuntimeException();
        }
        return e;
    }

    private static StatusRuntimeException contended(String what) {
        return Status.ABORTED
                .withDescription(what + " lost " + MAX_ATTEMPTS
                        + " compare-and-swap rounds to concurrent changes of the same name; try again")
                .asRuntimeException();
    }

    @Override
    public void announce(AnnounceRequest request, StreamObserver<AnnounceResponse> out) {
        Calls.unary(
                out,
                () -> {
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
                    ByteString token = ByteString.copyFrom(Calls.newToken());
                    Set<Integer> lanes = lanes(peer);
                    for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                        Optional<StoredPeer> old = store.peer(peer.getName());
                        if (old.isEmpty() && store.peerCount() >= limits.maxPeers()) {
                            throw Status.RESOURCE_EXHAUSTED
                                    .withDescription("the directory holds its limit of " + limits.maxPeers() + " peers")
                                    .asRuntimeException();
                        }
                        List<Buffer> keep = new ArrayList<>();
                        if (old.isPresent() && old.get().peer().getGeneration() == peer.getGeneration()) {
                            // The same process announcing again keeps its buffers where their lanes still exist.
                            for (Buffer b : store.buffersOf(old.get())) {
                                if (b.getLanesList().stream().allMatch(k -> lanes.contains(k.getLane()))) {
                                    keep.add(b);
                                }
                            }
                        }
                        Optional<StoredPeer> now =
                                store.announce(old, peer, token, TimeUnit.NANOSECONDS.toMillis(lease), keep);
                        if (now.isPresent()) {
                            return AnnounceResponse.newBuilder()
                                    .setLeaseToken(token)
                                    .setLeaseMillis((int) now.get().leaseMillis())
                                    .setRevision(now.get().revision())
                                    .build();
                        }
                    }
                    throw contended("announce of '" + peer.getName() + "'");
                },
                metrics::announced);
    }

    private static Set<Integer> lanes(Peer peer) {
        Set<Integer> l = new HashSet<>();
        for (Lane lane : peer.getLanesList()) {
            l.add(lane.getIndex());
        }
        return l;
    }

    @Override
    public void heartbeat(HeartbeatRequest request, StreamObserver<HeartbeatResponse> out) {
        Calls.unary(
                out,
                () -> {
                    StoredPeer e;
                    try {
                        e = authorize("heartbeat name", request.getName(), request.getLeaseToken());
                    } catch (StatusRuntimeException ex) {
                        if (ex.getStatus().getCode() == Status.Code.NOT_FOUND) {
                            // an expired entry answers NOT_FOUND; make its departure visible now
                            metrics.expired(store.expireLeases());
                        }
                        throw ex;
                    }
                    if (!store.renew(e)) {
                        metrics.expired(store.expireLeases());
                        throw Status.NOT_FOUND
                                .withDescription(
                                        "the lease of peer '" + request.getName() + "' ran out: announce again")
                                .asRuntimeException();
                    }
                    return HeartbeatResponse.newBuilder()
                            .setLeaseMillis((int) e.leaseMillis())
                            .build();
                },
                metrics::heartbeat);
    }

    @Override
    public void withdraw(WithdrawRequest request, StreamObserver<WithdrawResponse> out) {
        Calls.unary(
                out,
                () -> {
                    StoredPeer e = authorize("withdraw name", request.getName(), request.getLeaseToken());
                    store.withdraw(e);
                    return WithdrawResponse.getDefaultInstance();
                },
                metrics::withdrew);
    }

    @Override
    public void resolve(ResolveRequest request, StreamObserver<ResolveResponse> out) {
        Calls.unary(
                out,
                () -> {
                    Validation.name("resolve name", request.getName());
                    StoredPeer e = store.peer(request.getName())
                            .orElseThrow(() -> Status.NOT_FOUND
                                    .withDescription("no peer named '" + request.getName() + "' is announced")
                                    .asRuntimeException());
                    return ResolveResponse.newBuilder().setPeer(e.peer()).build();
                },
                code -> metrics.resolved("peer", code));
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
            List<Peer> found = store.peers(request.getAfter(), page + 1);
            ListResponse.Builder b = ListResponse.newBuilder();
            b.addAllPeers(found.subList(0, Math.min(page, found.size())));
            if (request.getWithState()) {
                for (Peer p : b.getPeersList()) {
                    b.addStates(state(p));
                }
            }
            if (found.size() > page) {
                b.setMore(true);
            }
            return b.build();
        });
    }

    /** A peer's lease and buffer names as the store holds them now (it may have left since the page was read). */
    private PeerState state(Peer p) {
        PeerState.Builder s = PeerState.newBuilder().setName(p.getName()).setLeaseRemainingMillis(-1);
        store.peer(p.getName())
                .filter(sp -> sp.peer().getGeneration() == p.getGeneration())
                .ifPresent(sp -> {
                    s.setLeaseMillis((int) Math.min(Integer.MAX_VALUE, sp.leaseMillis()))
                            .setLeaseRemainingMillis(store.leaseRemainingMillis(sp));
                    store.buffersOf(sp).stream().map(Buffer::getName).sorted().forEach(s::addBuffers);
                });
        return s.build();
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
        watchers.add(w);
        try {
            w.subscription(store.watch(w::offer, w::fail));
        } catch (StatusRuntimeException e) {
            w.fail(e.getStatus());
        }
    }

    @Override
    public void publish(PublishRequest request, StreamObserver<PublishResponse> out) {
        Calls.unary(out, () -> {
            StoredPeer owner = authorize("publish owner", request.getOwner(), request.getLeaseToken());
            if (!request.hasBuffer()) {
                throw Validation.invalid("publish without a buffer");
            }
            Buffer b = request.getBuffer();
            Validation.buffer(b, lanes(owner.peer()));
            if (!b.getOwner().isEmpty() && !b.getOwner().equals(request.getOwner())) {
                throw Validation.invalid("buffer " + b.getName() + " names owner '" + b.getOwner()
                        + "' but is published by '" + request.getOwner() + "'");
            }
            Buffer stored = b.toBuilder().setOwner(request.getOwner()).build();
            for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                Optional<StoredBuffer> existing = store.buffer(b.getName());
                boolean mine = existing.isPresent()
                        && existing.get().buffer().getOwner().equals(owner.name())
                        && existing.get().ownerVersion() == owner.version();
                if (existing.isPresent() && !mine) {
                    throw Status.ALREADY_EXISTS
                            .withDescription("buffer '" + b.getName() + "' is published by '"
                                    + existing.get().buffer().getOwner() + "'; pick another name")
                            .asRuntimeException();
                }
                if (mine && existing.get().buffer().getGeneration() > b.getGeneration()) {
                    throw Status.FAILED_PRECONDITION
                            .withDescription("buffer '" + b.getName() + "' is published at generation "
                                    + existing.get().buffer().getGeneration() + "; generation " + b.getGeneration()
                                    + " is stale")
                            .asRuntimeException();
                }
                if (!mine) {
                    if (store.bufferCount() >= limits.maxBuffers()) {
                        throw Status.RESOURCE_EXHAUSTED
                                .withDescription("the directory holds its limit of " + limits.maxBuffers() + " buffers")
                                .asRuntimeException();
                    }
                    if (store.buffersOf(owner).size() >= limits.maxBuffersPerPeer()) {
                        throw Status.RESOURCE_EXHAUSTED
                                .withDescription("peer '" + request.getOwner() + "' already publishes its limit of "
                                        + limits.maxBuffersPerPeer() + " buffers")
                                .asRuntimeException();
                    }
                }
                if (store.publish(owner, stored, existing)) {
                    return PublishResponse.getDefaultInstance();
                }
                if (store.peer(owner.name())
                        .filter(p -> p.version() == owner.version())
                        .isEmpty()) {
                    throw Status.NOT_FOUND
                            .withDescription("peer '" + request.getOwner() + "' left while publishing: announce again")
                            .asRuntimeException();
                }
            }
            throw contended("publish of '" + b.getName() + "'");
        });
    }

    @Override
    public void lookup(LookupRequest request, StreamObserver<LookupResponse> out) {
        Calls.unary(
                out,
                () -> {
                    Validation.name("lookup name", request.getName());
                    StoredPeer requester = null;
                    if (!request.getRequester().isEmpty()) {
                        try {
                            requester = authorize("lookup requester", request.getRequester(), request.getLeaseToken());
                        } catch (StatusRuntimeException e) {
                            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                                throw Status.PERMISSION_DENIED
                                        .withDescription(
                                                "requester '" + request.getRequester()
                                                        + "' is not announced (lease expired or directory restarted): announce again")
                                        .asRuntimeException();
                            }
                            throw e;
                        }
                    } else if (!request.getLeaseToken().isEmpty()) {
                        throw Validation.invalid("lookup carries a lease token but no requester");
                    }
                    Buffer b = store.buffer(request.getName())
                            .map(StoredBuffer::buffer)
                            .orElseThrow(() -> Status.NOT_FOUND
                                    .withDescription("no buffer named '" + request.getName() + "' is published")
                                    .asRuntimeException());
                    if (b.getAccessCount() > 0) {
                        if (requester == null) {
                            throw Status.PERMISSION_DENIED
                                    .withDescription("buffer '" + b.getName()
                                            + "' has an access list; look it up as an announced peer that is on it")
                                    .asRuntimeException();
                        }
                        if (!b.getAccessList().contains(requester.name())) {
                            throw Status.PERMISSION_DENIED
                                    .withDescription("peer '" + requester.name()
                                            + "' is not on the access list of buffer '" + b.getName() + "'")
                                    .asRuntimeException();
                        }
                    }
                    return LookupResponse.newBuilder().setBuffer(b).build();
                },
                code -> metrics.resolved("buffer", code));
    }

    @Override
    public void unpublish(UnpublishRequest request, StreamObserver<UnpublishResponse> out) {
        Calls.unary(out, () -> {
            StoredPeer owner = authorize("unpublish owner", request.getOwner(), request.getLeaseToken());
            Validation.name("unpublish name", request.getName());
            StoredBuffer e = store.buffer(request.getName())
                    .orElseThrow(() -> Status.NOT_FOUND
                            .withDescription("no buffer named '" + request.getName() + "' is published")
                            .asRuntimeException());
            if (!e.buffer().getOwner().equals(owner.name()) || e.ownerVersion() != owner.version()) {
                throw Status.PERMISSION_DENIED
                        .withDescription("buffer '" + request.getName() + "' belongs to '"
                                + e.buffer().getOwner() + "'")
                        .asRuntimeException();
            }
            if (!store.unpublish(owner, request.getName())) {
                throw Status.NOT_FOUND
                        .withDescription("no buffer named '" + request.getName() + "' is published")
                        .asRuntimeException();
            }
            return UnpublishResponse.getDefaultInstance();
        });
    }

    /** Removes every peer whose lease has run out, with a LEFT(EXPIRED) event each. @return how many */
    public int expireLeases() {
        int n = store.expireLeases();
        metrics.expired(n);
        return n;
    }

    /** @return peers currently held (including expired ones not yet swept) */
    public int peerCount() {
        return store.peerCount();
    }

    /** @return buffers currently held */
    public int bufferCount() {
        return store.bufferCount();
    }

    /** Ends every watch stream (server shutdown). */
    public void closeWatchers() {
        for (Watcher w : watchers) {
            w.fail(Status.UNAVAILABLE.withDescription("the directory is shutting down"));
        }
    }

    /** One watch stream with a bounded backlog, drained as the transport becomes ready. */
    private static final class Watcher {
        private final ServerCallStreamObserver<MembershipEvent> out;
        private final int maxBacklog;
        private final List<Watcher> registry;
        private final ArrayDeque<MembershipEvent> pending = new ArrayDeque<>();
        private boolean done;
        private AutoCloseable subscription;

        Watcher(ServerCallStreamObserver<MembershipEvent> out, int maxBacklog, List<Watcher> registry) {
            this.out = out;
            this.maxBacklog = maxBacklog;
            this.registry = registry;
        }

        // The store may deliver events while holding its own lock (jetcd does): the subscription is closed outside
        // this watcher's monitor, or closing it would wait on a store thread that waits on offer().
        void subscription(AutoCloseable s) {
            synchronized (this) {
                if (!done) {
                    this.subscription = s;
                    return;
                }
            }
            unsubscribe(s);
        }

        private synchronized AutoCloseable takeSubscription() {
            AutoCloseable s = subscription;
            subscription = null;
            return s;
        }

        private static void unsubscribe(AutoCloseable s) {
            if (s == null) {
                return;
            }
            try {
                s.close();
            } catch (Exception ignored) {
                // the store's stream is already gone; nothing more to release
            }
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

        void fail(Status s) {
            synchronized (this) {
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
            unsubscribe(takeSubscription());
        }

        void cancelled() {
            synchronized (this) {
                done = true;
                pending.clear();
                registry.remove(this);
            }
            unsubscribe(takeSubscription());
        }
    }
}
