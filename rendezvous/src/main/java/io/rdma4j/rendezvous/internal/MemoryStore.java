package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.MembershipEvent;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.rendezvous.store.DirectoryStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The directory's state in this JVM: soft, rebuilt from the peers' re-announcements after a restart. Changes take one
 * lock (they are short and keep events in order); reads take none.
 */
public final class MemoryStore implements DirectoryStore {
    private static final class Entry {
        final StoredPeer stored;
        final long leaseNanos;
        volatile long expiresAt;
        final Set<String> buffers = new HashSet<>(); // guarded by the store lock

        Entry(StoredPeer stored, long leaseNanos, long expiresAt) {
            this.stored = stored;
            this.leaseNanos = leaseNanos;
            this.expiresAt = expiresAt;
        }
    }

    private record Published(Buffer buffer, Entry owner) {}

    private final LongSupplier clock;
    private final Object lock = new Object();
    private final ConcurrentSkipListMap<String, Entry> peers = new ConcurrentSkipListMap<>();
    private final Map<String, Published> buffers = new ConcurrentHashMap<>();
    private final List<Consumer<MembershipEvent>> sinks = new CopyOnWriteArrayList<>();
    private long revision; // guarded by lock

    /** @param clock monotonic nanoseconds ({@code System::nanoTime}); tests pass a clock they advance */
    public MemoryStore(LongSupplier clock) {
        this.clock = clock;
    }

    @Override
    public String describe() {
        return "in memory";
    }

    private boolean alive(Entry e, long now) {
        return e != null && now - e.expiresAt < 0 && peers.get(e.stored.name()) == e;
    }

    private Entry live(StoredPeer p) {
        Entry e = peers.get(p.name());
        return e != null && e.stored.version() == p.version() && alive(e, clock.getAsLong()) ? e : null;
    }

    @Override
    public Optional<StoredPeer> peer(String name) {
        Entry e = peers.get(name);
        return alive(e, clock.getAsLong()) ? Optional.of(e.stored) : Optional.empty();
    }

    @Override
    public List<Peer> peers(String after, int limit) {
        Map<String, Entry> tail = after.isEmpty() ? peers : peers.tailMap(after, false);
        List<Peer> out = new ArrayList<>();
        long now = clock.getAsLong();
        for (Entry e : tail.values()) {
            if (out.size() == limit) {
                break;
            }
            if (alive(e, now)) {
                out.add(e.stored.peer());
            }
        }
        return out;
    }

    @Override
    public int peerCount() {
        return peers.size();
    }

    @Override
    public int bufferCount() {
        return buffers.size();
    }

    @Override
    public Optional<StoredPeer> announce(
            Optional<StoredPeer> expected, Peer peer, ByteString token, long leaseMillis, List<Buffer> keep) {
        long leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        synchronized (lock) {
            long now = clock.getAsLong();
            Entry old = peers.get(peer.getName());
            boolean oldAlive = alive(old, now);
            if (oldAlive != expected.isPresent()
                    || (oldAlive && old.stored.version() != expected.get().version())) {
                return Optional.empty();
            }
            long rev = ++revision;
            Entry entry = new Entry(new StoredPeer(peer, token, leaseMillis, rev, rev), leaseNanos, now + leaseNanos);
            if (old != null) {
                dropBuffers(old);
            }
            for (Buffer b : keep) {
                buffers.put(b.getName(), new Published(b, entry));
                entry.buffers.add(b.getName());
            }
            peers.put(peer.getName(), entry);
            send(
                    rev,
                    oldAlive ? MembershipEvent.Kind.KIND_UPDATED : MembershipEvent.Kind.KIND_JOINED,
                    peer,
                    MembershipEvent.Reason.REASON_ANNOUNCED);
            return Optional.of(entry.stored);
        }
    }

    @Override
    public boolean renew(StoredPeer p) {
        Entry e = live(p);
        if (e == null) {
            return false;
        }
        e.expiresAt = clock.getAsLong() + e.leaseNanos;
        return true;
    }

    @Override
    public boolean withdraw(StoredPeer p) {
        synchronized (lock) {
            Entry e = live(p);
            return e != null && remove(e, MembershipEvent.Reason.REASON_WITHDRAWN);
        }
    }

    @Override
    public Optional<StoredBuffer> buffer(String name) {
        Published p = buffers.get(name);
        return p != null && alive(p.owner(), clock.getAsLong())
                ? Optional.of(new StoredBuffer(p.buffer(), p.owner().stored.version(), 0))
                : Optional.empty();
    }

    @Override
    public List<Buffer> buffersOf(StoredPeer owner) {
        synchronized (lock) {
            Entry e = live(owner);
            if (e == null) {
                return List.of();
            }
            List<Buffer> out = new ArrayList<>();
            for (String b : e.buffers) {
                Published p = buffers.get(b);
                if (p != null && p.owner() == e) {
                    out.add(p.buffer());
                }
            }
            return out;
        }
    }

    @Override
    public boolean publish(StoredPeer owner, Buffer buffer, Optional<StoredBuffer> expected) {
        synchronized (lock) {
            Entry e = live(owner);
            if (e == null || !buffer(buffer.getName()).equals(expected)) {
                return false;
            }
            Published old = buffers.put(buffer.getName(), new Published(buffer, e));
            if (old != null && old.owner() != e) {
                old.owner().buffers.remove(buffer.getName());
            }
            e.buffers.add(buffer.getName());
            return true;
        }
    }

    @Override
    public boolean unpublish(StoredPeer owner, String name) {
        synchronized (lock) {
            Entry e = live(owner);
            Published p = buffers.get(name);
            if (e == null || p == null || p.owner() != e) {
                return false;
            }
            buffers.remove(name);
            e.buffers.remove(name);
            return true;
        }
    }

    @Override
    public AutoCloseable watch(Consumer<MembershipEvent> sink, Consumer<Status> ended) {
        synchronized (lock) {
            long now = clock.getAsLong();
            for (Entry e : peers.values()) {
                if (alive(e, now)) {
                    sink.accept(MembershipEvent.newBuilder()
                            .setKind(MembershipEvent.Kind.KIND_JOINED)
                            .setPeer(e.stored.peer())
                            .setReason(MembershipEvent.Reason.REASON_ANNOUNCED)
                            .setRevision(revision)
                            .build());
                }
            }
            sink.accept(MembershipEvent.newBuilder()
                    .setKind(MembershipEvent.Kind.KIND_SYNCED)
                    .setRevision(revision)
                    .build());
            sinks.add(sink);
        }
        return () -> sinks.remove(sink);
    }

    @Override
    public long leaseRemainingMillis(StoredPeer peer) {
        Entry e = peers.get(peer.name());
        if (e == null || e.stored.version() != peer.version()) {
            return -1;
        }
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(e.expiresAt - clock.getAsLong()));
    }

    @Override
    public int expireLeases() {
        int n = 0;
        synchronized (lock) {
            long now = clock.getAsLong();
            for (Entry e : new ArrayList<>(peers.values())) {
                if (now - e.expiresAt >= 0 && remove(e, MembershipEvent.Reason.REASON_EXPIRED)) {
                    n++;
                }
            }
        }
        return n;
    }

    @Override
    public void close() {
        sinks.clear();
    }

    private boolean remove(Entry e, MembershipEvent.Reason reason) {
        if (!peers.remove(e.stored.name(), e)) {
            return false;
        }
        dropBuffers(e);
        send(++revision, MembershipEvent.Kind.KIND_LEFT, e.stored.peer(), reason);
        return true;
    }

    private void dropBuffers(Entry e) {
        for (String b : e.buffers) {
            buffers.computeIfPresent(b, (k, v) -> v.owner() == e ? null : v);
        }
        e.buffers.clear();
    }

    private void send(long rev, MembershipEvent.Kind kind, Peer peer, MembershipEvent.Reason reason) {
        MembershipEvent ev = MembershipEvent.newBuilder()
                .setKind(kind)
                .setPeer(peer)
                .setReason(reason)
                .setRevision(rev)
                .build();
        for (Consumer<MembershipEvent> s : sinks) {
            s.accept(ev);
        }
    }
}
