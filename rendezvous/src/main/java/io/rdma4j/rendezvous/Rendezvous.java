package io.rdma4j.rendezvous;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.proto.v1.ListRequest;
import io.rdma4j.proto.v1.ListResponse;
import io.rdma4j.proto.v1.LookupRequest;
import io.rdma4j.proto.v1.MembershipEvent;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.proto.v1.ResolveRequest;
import io.rdma4j.proto.v1.WatchRequest;
import io.rdma4j.rendezvous.internal.ClientErrors;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.internal.Validation;
import io.rdma4j.rendezvous.internal.Wire;
import io.rdma4j.rendezvous.store.DirectoryStores;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A client of a directory, whether embedded in this JVM or remote: the calls are the same.
 *
 * <pre>{@code
 * try (Rendezvous r = Rendezvous.connect("10.0.0.1:7777", token);      // or Rendezvous.embedded()
 *      Announcement me = r.announce(myPeer, Duration.ofSeconds(10))) {
 *     me.publish(BufferInfo.of("weights", len, MemoryKind.HOST, Locality.host(0), 1, keys));
 *     PeerInfo other = r.resolve("trainer-1").orElseThrow();
 * }
 * }</pre>
 *
 * Every call has a deadline ({@link #callTimeout()}); a directory that is down fails the call with {@code UNAVAILABLE}
 * at once, one that does not answer with {@code DEADLINE_EXCEEDED} after the timeout. Failures are
 * {@link RendezvousException}s carrying the gRPC status.
 */
public final class Rendezvous implements AutoCloseable {
    /** Deadline of each call unless another is given. */
    public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(5);
    /** Peers per List call: about 64 KiB of four-lane peers, far below the message size limit. */
    static final int LIST_PAGE = 256;

    private static final class Embedded {
        static final DirectoryServer SERVER =
                DirectoryServer.builder().inProcess("rdma4j-embedded-directory").start();
    }

    /** One directory of the list a client fails over between. */
    private record Endpoint(
            String target,
            ManagedChannel channel,
            DirectoryGrpc.DirectoryBlockingStub blocking,
            DirectoryGrpc.DirectoryStub async) {}

    private final String target;
    private final List<Endpoint> endpoints;
    private volatile int current;
    private final DirectoryServer local; // the in-process directory over a store, for etcd:// targets
    private final Duration callTimeout;
    private final ScheduledExecutorService heartbeats;
    private final Set<Announcement> announcements = ConcurrentHashMap.newKeySet();

    private Rendezvous(String target, Security security, Duration callTimeout) {
        if (callTimeout.isNegative() || callTimeout.isZero()) {
            throw new IllegalArgumentException("callTimeout must be > 0, got " + callTimeout);
        }
        this.target = target;
        this.callTimeout = callTimeout;
        List<String> targets;
        if (DirectoryStores.isStoreUrl(target)) {
            // No directory process: this JVM runs the directory's calls itself, in process, over the shared store, so
            // validation, tokens and access lists are applied here exactly as a directory process would.
            this.local = DirectoryServer.builder()
                    .inProcess("rdma4j-store-client-" + UUID.randomUUID())
                    .store(target)
                    .sweepInterval(Duration.ZERO)
                    .start();
            targets = List.of(local.target());
        } else {
            this.local = null;
            targets = splitTargets(target);
        }
        List<Endpoint> eps = new ArrayList<>();
        for (String t : targets) {
            ManagedChannel ch = Transport.channel(t, security);
            eps.add(new Endpoint(t, ch, DirectoryGrpc.newBlockingStub(ch), DirectoryGrpc.newStub(ch)));
        }
        this.endpoints = List.copyOf(eps);
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rdma4j-rendezvous-heartbeat");
            t.setDaemon(true);
            return t;
        });
    }

    /** A client of this JVM's embedded directory (started on first use, shared by every caller in the JVM). */
    public static Rendezvous embedded() {
        return new Rendezvous(Embedded.SERVER.target(), Security.none(), DEFAULT_CALL_TIMEOUT);
    }

    /** @return the target of this JVM's embedded directory ({@code inproc:...}), starting it if needed */
    public static String embeddedTarget() {
        return Embedded.SERVER.target();
    }

    private static List<String> splitTargets(String target) {
        List<String> out = new ArrayList<>();
        for (String t : target.split(",")) {
            if (!t.isBlank()) {
                out.add(t.strip());
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(
                    "directory target '" + target + "' names no directory: expected HOST:PORT[,HOST:PORT...]");
        }
        return out;
    }

    /**
     * A client of the directory at {@code target}.
     *
     * @param target {@code host:port}; a list {@code host:port,host:port} of directories serving one store, tried in
     *     turn when one does not answer; {@code etcd://host:port[,host:port...]} to use etcd with no directory process
     *     ({@code rdma4j-rendezvous-etcd} on the class path); or {@code inproc:NAME} for an in-process
     *     {@link DirectoryServer}
     * @param token the directory's bearer token, or {@code null} for a token-less (loopback) directory
     */
    public static Rendezvous connect(String target, String token) {
        return connect(target, token == null ? Security.none() : Security.token(token));
    }

    public static Rendezvous connect(String target, Security security) {
        return connect(target, security, DEFAULT_CALL_TIMEOUT);
    }

    public static Rendezvous connect(String target, Security security, Duration callTimeout) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(security, "security");
        return new Rendezvous(target, security, callTimeout);
    }

    /** @return the directory's target */
    public String target() {
        return target;
    }

    public Duration callTimeout() {
        return callTimeout;
    }

    /**
     * Runs {@code body} against the directory that last answered, then each other one in turn while they are down or do
     * not answer; any other failure is the answer.
     *
     * @throws StatusRuntimeException the answer, or the last directory's failure when none answered
     */
    <T> T invoke(Function<DirectoryGrpc.DirectoryBlockingStub, T> body) {
        int start = current;
        StatusRuntimeException last = null;
        for (int i = 0; i < endpoints.size(); i++) {
            int at = (start + i) % endpoints.size();
            for (int attempt = 0; attempt < 2; attempt++) {
                long began = System.nanoTime();
                try {
                    T result = body.apply(endpoints
                            .get(at)
                            .blocking()
                            .withDeadlineAfter(callTimeout.toNanos(), TimeUnit.NANOSECONDS));
                    current = at;
                    return result;
                } catch (StatusRuntimeException e) {
                    io.grpc.Status.Code c = e.getStatus().getCode();
                    if (c != io.grpc.Status.Code.UNAVAILABLE && c != io.grpc.Status.Code.DEADLINE_EXCEEDED) {
                        throw e;
                    }
                    last = e;
                    if (!neverStarted(e) && !startedLate(e, System.nanoTime() - began)) {
                        break;
                    }
                }
            }
        }
        throw last;
    }

    /**
     * True when gRPC gave up on a call before sending it: its deadline ran out while the channel was still being set up
     * (the first call of a cold JVM loads gRPC, which has taken longer than the whole call timeout on a loaded,
     * emulated machine), or while the call still waited for a connection to the directory ({@code was_still_waiting}:
     * gRPC never made its stream; a cold JVM in the test VM spent the whole 15 s connecting). Nothing reached the
     * directory, so the call is safe to make again with a fresh deadline.
     */
    private static boolean neverStarted(StatusRuntimeException e) {
        String d = e.getStatus().getDescription();
        return e.getStatus().getCode() == io.grpc.Status.Code.DEADLINE_EXCEEDED
                && d != null
                && (d.startsWith("ClientCall started after") || d.contains("was_still_waiting"));
    }

    /** What gRPC says of a call whose deadline ran out while it ran: how long it ran. */
    private static final java.util.regex.Pattern RAN_FOR =
            java.util.regex.Pattern.compile("deadline exceeded after (\\d+(?:\\.\\d+)?)s");

    /**
     * True when a call ran out of time but had less than half of its deadline left when gRPC started it: the rest went
     * on this side before anything was sent (a cold JVM in an emulated guest loading gRPC has spent 13 of 15 s so). The
     * directory had no fair chance to answer, so the call is made once more with a fresh deadline. A call that may have
     * reached the directory is safe to repeat: lookups read, and an announce or publish of this peer's own name
     * replaces what the first one did.
     */
    private boolean startedLate(StatusRuntimeException e, long elapsedNanos) {
        String d = e.getStatus().getDescription();
        if (e.getStatus().getCode() != io.grpc.Status.Code.DEADLINE_EXCEEDED || d == null) {
            return false;
        }
        java.util.regex.Matcher m = RAN_FOR.matcher(d);
        if (!m.find()) {
            return false;
        }
        long ran = (long) (Double.parseDouble(m.group(1)) * 1e9);
        return elapsedNanos - ran > callTimeout.toNanos() / 2;
    }

    ScheduledExecutorService heartbeats() {
        return heartbeats;
    }

    void forget(Announcement a) {
        announcements.remove(a);
    }

    <T> T call(String what, Function<DirectoryGrpc.DirectoryBlockingStub, T> body) {
        try {
            return invoke(body);
        } catch (StatusRuntimeException e) {
            throw ClientErrors.of("directory", target, what, e);
        }
    }

    /**
     * Announces {@code peer} under a lease that this client renews in the background (every third of the lease). If the
     * directory forgets the peer (it restarted), the next heartbeat announces again and re-publishes.
     *
     * @param lease requested lease; the directory clamps it to its limits
     */
    public Announcement announce(PeerInfo peer, Duration lease) {
        return announce(peer, lease, null);
    }

    /**
     * Announces {@code peer} as {@link #announce(PeerInfo, Duration)} does, telling {@code listener} each time the
     * directory forgot it and it announces itself again.
     */
    public Announcement announce(PeerInfo peer, Duration lease, Announcement.Listener listener) {
        checkName("peer name", peer.name());
        Announcement a = new Announcement(this, peer, lease, listener);
        announcements.add(a);
        return a;
    }

    /** @return the peer named {@code name}, or empty when none is announced */
    public Optional<PeerInfo> resolve(String name) {
        checkName("peer name", name);
        try {
            return Optional.of(checked(invoke(s ->
                            s.resolve(ResolveRequest.newBuilder().setName(name).build()))
                    .getPeer()));
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND) {
                return Optional.empty();
            }
            throw ClientErrors.of("directory", target, "resolve(" + name + ")", e);
        }
    }

    /** @return every announced peer, in name order (fetched a page at a time) */
    public List<PeerInfo> list() {
        return status(false).stream().map(PeerStatus::peer).toList();
    }

    /** @return every announced peer with its lease and published buffers, in name order (for operators) */
    public List<PeerStatus> listStatus() {
        return status(true);
    }

    private List<PeerStatus> status(boolean withState) {
        List<PeerStatus> out = new ArrayList<>();
        String after = "";
        while (true) {
            String from = after;
            ListResponse page = call(
                    "list",
                    s -> s.list(ListRequest.newBuilder()
                            .setPageSize(LIST_PAGE)
                            .setAfter(from)
                            .setWithState(withState)
                            .build()));
            if (withState && page.getStatesCount() != page.getPeersCount()) {
                throw new RendezvousException(
                        io.grpc.Status.Code.INTERNAL,
                        "directory at " + target + " answered list with " + page.getPeersCount() + " peers but "
                                + page.getStatesCount() + " states: it runs an older version; upgrade it");
            }
            for (int i = 0; i < page.getPeersCount(); i++) {
                PeerInfo p = checked(page.getPeers(i));
                if (withState) {
                    io.rdma4j.proto.v1.PeerState st = page.getStates(i);
                    out.add(new PeerStatus(
                            p,
                            Integer.toUnsignedLong(st.getLeaseMillis()),
                            st.getLeaseRemainingMillis(),
                            st.getBuffersList()));
                } else {
                    out.add(new PeerStatus(p, -1, -1, List.of()));
                }
            }
            if (!page.getMore() || page.getPeersCount() == 0) {
                return out;
            }
            after = page.getPeers(page.getPeersCount() - 1).getName();
        }
    }

    /**
     * Looks up a buffer as an anonymous (authenticated) caller: only buffers without an access list are visible this
     * way; use {@link Announcement#lookup} for restricted ones.
     *
     * @return the buffer, or empty when none has that name
     * @throws RendezvousException PERMISSION_DENIED when the buffer has an access list
     */
    public Optional<BufferInfo> lookup(String name) {
        checkName("buffer name", name);
        return lookup(name, LookupRequest.newBuilder().setName(name).build());
    }

    Optional<BufferInfo> lookup(String name, LookupRequest request) {
        try {
            io.rdma4j.proto.v1.Buffer b = invoke(s -> s.lookup(request)).getBuffer();
            try {
                Validation.buffer(b, null);
                return Optional.of(Wire.fromProto(b));
            } catch (StatusRuntimeException | IllegalArgumentException bad) {
                throw malformed("buffer " + b.getName(), bad);
            }
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND) {
                return Optional.empty();
            }
            throw ClientErrors.of("directory", target, "lookup(" + name + ")", e);
        }
    }

    /**
     * Streams membership: a JOINED event for each present peer, one SYNCED, then live changes. {@code onError} gets the
     * reason the stream ended (directory shut down or unreachable); watch again to resume. The stream has no deadline:
     * it lasts until {@link Watch#close()}.
     */
    public Watch watch(Consumer<PeerEvent> onEvent, Consumer<RendezvousException> onError) {
        Objects.requireNonNull(onEvent, "onEvent");
        Objects.requireNonNull(onError, "onError");
        Watch w = new Watch();
        int at = current;
        endpoints
                .get(at)
                .async()
                .watch(WatchRequest.getDefaultInstance(), new ClientResponseObserver<WatchRequest, MembershipEvent>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {
                        w.call = call;
                    }

                    @Override
                    public void onNext(MembershipEvent e) {
                        PeerEvent ev;
                        try {
                            if (e.hasPeer()) {
                                Validation.peer(e.getPeer());
                            }
                            ev = Wire.fromProto(e);
                        } catch (StatusRuntimeException | IllegalArgumentException bad) {
                            w.close();
                            onError.accept(malformed("watch event", bad));
                            return;
                        }
                        if (ev != null) { // kinds this version does not know are skipped
                            onEvent.accept(ev);
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        if (t instanceof StatusRuntimeException s
                                && s.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE
                                && current == at) {
                            current = (at + 1) % endpoints.size(); // the next watch (and call) tries another directory
                        }
                        if (!w.closed) {
                            onError.accept(
                                    t instanceof StatusRuntimeException s
                                            ? ClientErrors.of("directory", target, "watch", s)
                                            : new RendezvousException(
                                                    io.grpc.Status.Code.UNKNOWN,
                                                    "directory at " + target + ": watch failed: " + t,
                                                    t));
                        }
                    }

                    @Override
                    public void onCompleted() {
                        if (!w.closed) {
                            onError.accept(new RendezvousException(
                                    io.grpc.Status.Code.UNAVAILABLE,
                                    "directory at " + target + " ended the watch; watch again"));
                        }
                    }
                });
        return w;
    }

    /** Answers are untrusted too: a peer from the directory is validated like one sent to it. */
    private PeerInfo checked(Peer p) {
        try {
            Validation.peer(p);
            return Wire.fromProto(p);
        } catch (StatusRuntimeException | IllegalArgumentException bad) {
            throw malformed("peer " + p.getName(), bad);
        }
    }

    private RendezvousException malformed(String what, RuntimeException bad) {
        String why = bad instanceof StatusRuntimeException s ? s.getStatus().getDescription() : bad.getMessage();
        return new RendezvousException(
                io.grpc.Status.Code.INVALID_ARGUMENT,
                "directory at " + target + " sent a malformed " + what + ": " + why,
                bad);
    }

    static void checkName(String what, String name) {
        if (!Validation.isValidName(name)) {
            throw new IllegalArgumentException(what + " '" + name + "' is not valid: 1.." + Validation.MAX_NAME_CHARS
                    + " of letters, digits and . _ : @ / -, starting with a letter or digit");
        }
    }

    /** Withdraws every announcement still open, stops heartbeats and closes the connection. */
    @Override
    public void close() {
        for (Announcement a : List.copyOf(announcements)) {
            a.close();
        }
        heartbeats.shutdownNow();
        for (Endpoint e : endpoints) {
            e.channel().shutdownNow();
        }
        try {
            for (Endpoint e : endpoints) {
                e.channel().awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (local != null) {
            local.close();
        }
    }

    /** A running {@link #watch}; {@link #close()} cancels it. */
    public static final class Watch implements AutoCloseable {
        private volatile ClientCallStreamObserver<WatchRequest> call;
        private volatile boolean closed;

        private Watch() {}

        @Override
        public void close() {
            closed = true;
            ClientCallStreamObserver<WatchRequest> c = call;
            if (c != null) {
                c.cancel("watch closed", null);
            }
        }
    }
}
