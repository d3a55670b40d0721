package io.rdma4j.rendezvous.etcd;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.MembershipEvent;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.rendezvous.store.DirectoryStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The directory's state in etcd, under {@code /rdma4j/CLUSTER/}:
 *
 * <ul>
 *   <li>{@code peers/NAME}: the announcement (lease token, lease, Peer), attached to an etcd lease of the peer's TTL,
 *       so etcd removes it when the peer stops renewing; the lease id identifies the announcement;
 *   <li>{@code buffers/NAME}: a published Buffer, and {@code owned/OWNER#NAME} its copy indexed by owner, both under
 *       the owner's lease so they leave with it ({@code #} cannot occur in a name);
 *   <li>{@code peers-withdrawn/NAME}: written in the same transaction that withdraws a peer, so watchers tell a
 *       withdrawal from an expiry; it lives on the withdrawn lease, revoked right after.
 * </ul>
 *
 * Every change is one transaction that compares the mod revision of what the directory read, so two directory processes
 * racing on one name cannot both win. Calls that etcd does not answer within {@link #CALL_TIMEOUT} fail with
 * UNAVAILABLE naming etcd.
 */
public final class EtcdStore implements DirectoryStore {
    /** Longest wait for etcd on one call; well under the shortest engine lease, so callers fail before it runs out. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
    /** Bound on the first call, which also sets up the client. */
    static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(20);

    private final EtcdUrl url;
    private final Client client;
    private final String prefix;

    private EtcdStore(EtcdUrl url, Client client) {
        this.url = url;
        this.client = client;
        this.prefix = "/rdma4j/" + url.cluster() + "/";
    }

    /** Connects to the members of {@code url}. @throws StatusRuntimeException UNAVAILABLE when etcd does not answer */
    public static EtcdStore open(EtcdUrl url) {
        Client client = Client.builder()
                .endpoints(url.endpoints().toArray(new String[0]))
                .connectTimeout(CALL_TIMEOUT)
                .waitForReady(false)
                .retryMaxDuration(CALL_TIMEOUT)
                .keepaliveTime(Duration.ofSeconds(5))
                .keepaliveTimeout(Duration.ofSeconds(2))
                .maxInboundMessageSize(64 << 20)
                .build();
        EtcdStore store = new EtcdStore(url, client);
        // The first call sets up the client (vert.x, channels): seconds on a loaded machine. Pay for it here, with a
        // bound of its own, so that later calls are held to CALL_TIMEOUT and a wrong URL fails at start.
        try {
            client.getKVClient()
                    .get(
                            store.key("peers/"),
                            GetOption.builder().withCountOnly(true).build())
                    .get(STARTUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException | ExecutionException e) {
            client.close();
            throw store.unavailable("first call", "no answer within " + STARTUP_TIMEOUT.toSeconds() + " s", e);
        } catch (InterruptedException e) {
            client.close();
            Thread.currentThread().interrupt();
            throw store.unavailable("first call", "interrupted", e);
        }
        return store;
    }

    @Override
    public String describe() {
        return url.toString();
    }

    private ByteSequence key(String k) {
        return ByteSequence.from(prefix + k, StandardCharsets.UTF_8);
    }

    /** @return the first key after every key that starts with {@code p} */
    private ByteSequence end(String p) {
        byte[] b = (prefix + p).getBytes(StandardCharsets.UTF_8);
        b[b.length - 1]++;
        return ByteSequence.from(b);
    }

    private <T> T await(CompletableFuture<T> f, String what) {
        try {
            return f.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw unavailable(what, "no answer within " + CALL_TIMEOUT.toMillis() + " ms", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw unavailable(what, String.valueOf(c.getMessage()), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable(what, "interrupted", e);
        }
    }

    private StatusRuntimeException unavailable(String what, String why, Throwable cause) {
        return Status.UNAVAILABLE
                .withDescription(describe() + ": " + what + " failed: " + why
                        + " (is a majority of the etcd members running and reachable? the directory recovers on its"
                        + " own once etcd answers)")
                .withCause(cause)
                .asRuntimeException();
    }

    // Value of peers/NAME: token length (1 byte), token, lease millis (8 bytes), then the Peer message.
    private static ByteSequence encode(Peer peer, ByteString token, long leaseMillis) {
        byte[] p = peer.toByteArray();
        ByteBuffer b = ByteBuffer.allocate(1 + token.size() + 8 + p.length);
        b.put((byte) token.size()).put(token.toByteArray()).putLong(leaseMillis).put(p);
        return ByteSequence.from(b.array());
    }

    private StoredPeer decodePeer(KeyValue kv) {
        ByteBuffer b = ByteBuffer.wrap(kv.getValue().getBytes());
        try {
            byte[] token = new byte[b.get() & 0xff];
            b.get(token);
            long leaseMillis = b.getLong();
            Peer peer = Peer.parseFrom(b);
            return new StoredPeer(peer, ByteString.copyFrom(token), leaseMillis, kv.getLease(), kv.getModRevision());
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw Status.DATA_LOSS
                    .withDescription(describe() + " holds an unreadable announcement at " + kv.getKey()
                            + ": was it written by another program? delete it with etcdctl del")
                    .asRuntimeException();
        }
    }

    private Buffer decodeBuffer(KeyValue kv) {
        try {
            return Buffer.parseFrom(kv.getValue().getBytes());
        } catch (InvalidProtocolBufferException e) {
            throw Status.DATA_LOSS
                    .withDescription(describe() + " holds an unreadable buffer at " + kv.getKey()
                            + ": was it written by another program? delete it with etcdctl del")
                    .asRuntimeException();
        }
    }

    private Optional<KeyValue> get(String k, String what) {
        List<KeyValue> kvs = await(client.getKVClient().get(key(k)), what).getKvs();
        return kvs.isEmpty() ? Optional.empty() : Optional.of(kvs.getFirst());
    }

    @Override
    public Optional<StoredPeer> peer(String name) {
        return get("peers/" + name, "read peer " + name).map(this::decodePeer);
    }

    @Override
    public List<Peer> peers(String after, int limit) {
        ByteSequence from = after.isEmpty() ? key("peers/") : key("peers/" + after + "\0");
        GetResponse r = await(
                client.getKVClient()
                        .get(
                                from,
                                GetOption.builder()
                                        .withRange(end("peers/"))
                                        .withLimit(limit)
                                        .build()),
                "list peers");
        List<Peer> out = new ArrayList<>(r.getKvs().size());
        for (KeyValue kv : r.getKvs()) {
            out.add(decodePeer(kv).peer());
        }
        return out;
    }

    private int count(String p, String what) {
        GetOption o = GetOption.builder().isPrefix(true).withCountOnly(true).build();
        return (int) await(client.getKVClient().get(key(p), o), what).getCount();
    }

    @Override
    public int peerCount() {
        return count("peers/", "count peers");
    }

    @Override
    public int bufferCount() {
        return count("buffers/", "count buffers");
    }

    @Override
    public Optional<StoredPeer> announce(
            Optional<StoredPeer> expected, Peer peer, ByteString token, long leaseMillis, List<Buffer> keep) {
        String name = peer.getName();
        long ttl = Math.max(1, (leaseMillis + 999) / 1000);
        var grant = await(client.getLeaseClient().grant(ttl), "grant a lease for " + name);
        long lease = grant.getID();
        long granted = grant.getTTL() * 1000; // etcd raises a TTL below its minimum (1.5 x election timeout)
        PutOption withLease = PutOption.builder().withLeaseId(lease).build();
        Cmp unchanged = expected.isPresent()
                ? new Cmp(
                        key("peers/" + name),
                        Cmp.Op.EQUAL,
                        CmpTarget.modRevision(expected.get().revision()))
                : new Cmp(key("peers/" + name), Cmp.Op.EQUAL, CmpTarget.version(0));
        List<Op> ops = new ArrayList<>();
        ops.add(Op.put(key("peers/" + name), encode(peer, token, granted), withLease));
        for (Buffer b : keep) {
            ByteSequence v = ByteSequence.from(b.toByteArray());
            ops.add(Op.put(key("buffers/" + b.getName()), v, withLease));
            ops.add(Op.put(key("owned/" + name + "#" + b.getName()), v, withLease));
        }
        TxnResponse r = await(
                client.getKVClient()
                        .txn()
                        .If(unchanged)
                        .Then(ops.toArray(new Op[0]))
                        .commit(),
                "announce " + name);
        if (!r.isSucceeded()) {
            revokeQuietly(lease);
            return Optional.empty();
        }
        // the replaced announcement's lease takes its buffers that were not kept, and its withdrawal marker, with it
        expected.ifPresent(old -> revokeQuietly(old.version()));
        return Optional.of(
                new StoredPeer(peer, token, granted, lease, r.getHeader().getRevision()));
    }

    private void revokeQuietly(long lease) {
        try {
            await(client.getLeaseClient().revoke(lease), "revoke lease " + lease);
        } catch (StatusRuntimeException e) {
            // the lease runs out on its own: nobody renews it
        }
    }

    @Override
    public boolean renew(StoredPeer peer) {
        LeaseKeepAliveResponse r;
        try {
            r = await(client.getLeaseClient().keepAliveOnce(peer.version()), "renew the lease of " + peer.name());
        } catch (StatusRuntimeException e) {
            if (String.valueOf(e.getStatus().getDescription()).contains("lease not found")) {
                return false;
            }
            throw e;
        }
        return r.getTTL() > 0;
    }

    @Override
    public long leaseRemainingMillis(StoredPeer peer) {
        // the announcement's etcd lease: its TTL left, in whole seconds (-1 once it expired or was revoked)
        long ttl = await(
                        client.getLeaseClient().timeToLive(peer.version(), LeaseOption.DEFAULT),
                        "read the lease of " + peer.name())
                .getTTL();
        return ttl < 0 ? -1 : ttl * 1000;
    }

    @Override
    public boolean withdraw(StoredPeer peer) {
        String name = peer.name();
        TxnResponse r = await(
                client.getKVClient()
                        .txn()
                        .If(new Cmp(key("peers/" + name), Cmp.Op.EQUAL, CmpTarget.modRevision(peer.revision())))
                        .Then(
                                Op.delete(key("peers/" + name), DeleteOption.DEFAULT),
                                Op.put(
                                        key("peers-withdrawn/" + name),
                                        ByteSequence.EMPTY,
                                        PutOption.builder()
                                                .withLeaseId(peer.version())
                                                .build()))
                        .commit(),
                "withdraw " + name);
        revokeQuietly(peer.version());
        return r.isSucceeded();
    }

    @Override
    public Optional<StoredBuffer> buffer(String name) {
        Optional<KeyValue> kv = get("buffers/" + name, "read buffer " + name);
        if (kv.isEmpty()) {
            return Optional.empty();
        }
        Buffer b = decodeBuffer(kv.get());
        long ownerLease = kv.get().getLease();
        // a buffer left from a replaced announcement lives until its old lease is revoked: it is not the owner's
        Optional<StoredPeer> owner = peer(b.getOwner());
        if (owner.isEmpty() || owner.get().version() != ownerLease) {
            return Optional.empty();
        }
        return Optional.of(new StoredBuffer(b, ownerLease, kv.get().getModRevision()));
    }

    @Override
    public List<Buffer> buffersOf(StoredPeer owner) {
        GetResponse r = await(
                client.getKVClient()
                        .get(
                                key("owned/" + owner.name() + "#"),
                                GetOption.builder().isPrefix(true).build()),
                "list buffers of " + owner.name());
        List<Buffer> out = new ArrayList<>();
        for (KeyValue kv : r.getKvs()) {
            if (kv.getLease() == owner.version()) {
                out.add(decodeBuffer(kv));
            }
        }
        return out;
    }

    @Override
    public boolean publish(StoredPeer owner, Buffer buffer, Optional<StoredBuffer> expected) {
        String name = buffer.getName();
        ByteSequence bk = key("buffers/" + name);
        Cmp same = expected.isPresent()
                ? new Cmp(bk, Cmp.Op.EQUAL, CmpTarget.modRevision(expected.get().revision()))
                : new Cmp(bk, Cmp.Op.EQUAL, CmpTarget.version(0));
        PutOption withLease = PutOption.builder().withLeaseId(owner.version()).build();
        ByteSequence v = ByteSequence.from(buffer.toByteArray());
        TxnResponse r = await(
                client.getKVClient()
                        .txn()
                        .If(
                                new Cmp(
                                        key("peers/" + owner.name()),
                                        Cmp.Op.EQUAL,
                                        CmpTarget.modRevision(owner.revision())),
                                same)
                        .Then(Op.put(bk, v, withLease), Op.put(key("owned/" + owner.name() + "#" + name), v, withLease))
                        .commit(),
                "publish " + name);
        return r.isSucceeded();
    }

    @Override
    public boolean unpublish(StoredPeer owner, String name) {
        Optional<StoredBuffer> b = buffer(name);
        if (b.isEmpty() || b.get().ownerVersion() != owner.version()) {
            return false;
        }
        TxnResponse r = await(
                client.getKVClient()
                        .txn()
                        .If(
                                new Cmp(
                                        key("peers/" + owner.name()),
                                        Cmp.Op.EQUAL,
                                        CmpTarget.modRevision(owner.revision())),
                                new Cmp(
                                        key("buffers/" + name),
                                        Cmp.Op.EQUAL,
                                        CmpTarget.modRevision(b.get().revision())))
                        .Then(
                                Op.delete(key("buffers/" + name), DeleteOption.DEFAULT),
                                Op.delete(key("owned/" + owner.name() + "#" + name), DeleteOption.DEFAULT))
                        .commit(),
                "unpublish " + name);
        return r.isSucceeded();
    }

    @Override
    public AutoCloseable watch(Consumer<MembershipEvent> sink, Consumer<Status> ended) {
        GetResponse snapshot = await(
                client.getKVClient()
                        .get(key("peers/"), GetOption.builder().isPrefix(true).build()),
                "read peers for a watch");
        long revision = snapshot.getHeader().getRevision();
        for (KeyValue kv : snapshot.getKvs()) {
            sink.accept(MembershipEvent.newBuilder()
                    .setKind(MembershipEvent.Kind.KIND_JOINED)
                    .setPeer(decodePeer(kv).peer())
                    .setReason(MembershipEvent.Reason.REASON_ANNOUNCED)
                    .setRevision(revision)
                    .build());
        }
        sink.accept(MembershipEvent.newBuilder()
                .setKind(MembershipEvent.Kind.KIND_SYNCED)
                .setRevision(revision)
                .build());
        // "peers-" sorts just before "peers/": one range holds the announcements and the withdrawal markers
        WatchOption o = WatchOption.builder()
                .withRange(end("peers/"))
                .withPrevKV(true)
                .withRevision(revision + 1)
                .build();
        return client.getWatchClient()
                .watch(
                        key("peers-"),
                        o,
                        Watch.listener(
                                r -> deliver(r, sink),
                                t -> ended.accept(Status.UNAVAILABLE.withDescription(
                                        describe() + ": the watch ended (" + t.getMessage() + "); watch again"))));
    }

    private void deliver(WatchResponse r, Consumer<MembershipEvent> sink) {
        String withdrawn = prefix + "peers-withdrawn/";
        String peers = prefix + "peers/";
        Set<String> markers = new HashSet<>();
        for (WatchEvent e : r.getEvents()) {
            String k = e.getKeyValue().getKey().toString(StandardCharsets.UTF_8);
            if (e.getEventType() == WatchEvent.EventType.PUT && k.startsWith(withdrawn)) {
                markers.add(
                        k.substring(withdrawn.length()) + "@" + e.getKeyValue().getModRevision());
            }
        }
        for (WatchEvent e : r.getEvents()) {
            String k = e.getKeyValue().getKey().toString(StandardCharsets.UTF_8);
            if (!k.startsWith(peers)) {
                continue;
            }
            String name = k.substring(peers.length());
            long rev = e.getKeyValue().getModRevision();
            KeyValue prev = e.getPrevKV();
            boolean hadPrev = prev != null && !prev.getKey().isEmpty();
            MembershipEvent.Builder ev = MembershipEvent.newBuilder().setRevision(rev);
            if (e.getEventType() == WatchEvent.EventType.PUT) {
                ev.setKind(hadPrev ? MembershipEvent.Kind.KIND_UPDATED : MembershipEvent.Kind.KIND_JOINED)
                        .setPeer(decodePeer(e.getKeyValue()).peer())
                        .setReason(MembershipEvent.Reason.REASON_ANNOUNCED);
            } else if (hadPrev) {
                ev.setKind(MembershipEvent.Kind.KIND_LEFT)
                        .setPeer(decodePeer(prev).peer())
                        .setReason(
                                markers.contains(name + "@" + rev)
                                        ? MembershipEvent.Reason.REASON_WITHDRAWN
                                        : MembershipEvent.Reason.REASON_EXPIRED);
            } else {
                continue; // a delete whose previous value was compacted away: nothing to say who left
            }
            sink.accept(ev.build());
        }
    }

    @Override
    public int expireLeases() {
        return 0; // etcd expires leases itself and the watch reports them
    }

    @Override
    public void close() {
        client.close();
    }
}
