package io.rdma4j.rendezvous;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.AnnounceRequest;
import io.rdma4j.proto.v1.AnnounceResponse;
import io.rdma4j.proto.v1.HeartbeatRequest;
import io.rdma4j.proto.v1.LookupRequest;
import io.rdma4j.proto.v1.PublishRequest;
import io.rdma4j.proto.v1.UnpublishRequest;
import io.rdma4j.proto.v1.WithdrawRequest;
import io.rdma4j.rendezvous.internal.ClientErrors;
import io.rdma4j.rendezvous.internal.Wire;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A peer announced to a directory, holding its lease. It renews the lease in the background, remembers what it
 * published, and re-announces and re-publishes when the directory has forgotten it (restart, or a lease lost while the
 * directory was unreachable). {@link #close()} withdraws the peer and its buffers.
 */
public final class Announcement implements AutoCloseable {
    /**
     * Told when the directory forgot this peer and it announces itself again, on the thread that found out (a
     * heartbeat's or a publish's), under the announcement's lock. The directory forgets a peer when its lease lapsed
     * (the others then saw it leave) or when the directory itself restarted (nobody saw anything); from the moment the
     * new announcement reaches the directory, peers can find this one again.
     */
    public interface Listener {
        /** Before the new announcement is sent. */
        void reannouncing();

        /** After the directory recorded the new announcement, at {@code revision} (see {@link #revision()}). */
        void reannounced(long revision);
    }

    private static final Listener NO_LISTENER = new Listener() {
        @Override
        public void reannouncing() {}

        @Override
        public void reannounced(long revision) {}
    };

    private final Rendezvous rendezvous;
    private final PeerInfo peer;
    private final Duration requestedLease;
    private final Listener listener;
    private final Map<String, BufferInfo> published = new LinkedHashMap<>(); // guarded by this
    private ByteString token; // guarded by this
    private Duration lease; // guarded by this
    private ScheduledFuture<?> beat; // guarded by this
    private int reannouncements; // guarded by this
    private boolean closed; // guarded by this
    private volatile long revision;
    private volatile RendezvousException lastError;

    Announcement(Rendezvous rendezvous, PeerInfo peer, Duration lease, Listener listener) {
        if (lease.isNegative() || lease.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "lease must be 0 (the directory's default) or a positive duration under 2^31 ms, got " + lease);
        }
        this.rendezvous = rendezvous;
        this.peer = peer;
        this.requestedLease = lease;
        this.listener = listener == null ? NO_LISTENER : listener;
        synchronized (this) {
            announce();
        }
    }

    private void announce() {
        AnnounceResponse r = rendezvous.call(
                "announce(" + peer.name() + ")",
                s -> s.announce(AnnounceRequest.newBuilder()
                        .setPeer(Wire.toProto(peer))
                        .setLeaseMillis((int) requestedLease.toMillis())
                        .build()));
        token = r.getLeaseToken();
        lease = Duration.ofMillis(r.getLeaseMillis());
        revision = r.getRevision();
        if (beat != null) {
            beat.cancel(false);
        }
        long every = Math.max(1, lease.toMillis() / 3);
        beat = rendezvous
                .heartbeats()
                .scheduleWithFixedDelay(this::backgroundHeartbeat, every, every, TimeUnit.MILLISECONDS);
    }

    private void backgroundHeartbeat() {
        try {
            heartbeat();
            lastError = null;
        } catch (RendezvousException e) {
            lastError = e; // the next beat tries again; a directory that is back answers NOT_FOUND and we re-announce
        } catch (RuntimeException e) {
            lastError =
                    new RendezvousException(Status.Code.INTERNAL, "heartbeat of " + peer.name() + " failed: " + e, e);
        }
    }

    /** @return the peer as announced */
    public PeerInfo peer() {
        return peer;
    }

    /** @return the lease the directory granted */
    public synchronized Duration lease() {
        return lease;
    }

    /**
     * {@return the directory's revision at which it recorded the latest announcement} Events it sends about this peer's
     * earlier announcements (such as the expiry of a lapsed lease) carry lower revisions, as long as the directory did
     * not restart in between.
     */
    public long revision() {
        return revision;
    }

    /** @return how many times the directory had forgotten this peer and it announced again */
    public synchronized int reannouncements() {
        return reannouncements;
    }

    /** @return why the last background heartbeat failed, or {@code null} if it succeeded */
    public RendezvousException lastError() {
        return lastError;
    }

    /**
     * Renews the lease now (the background does this every third of the lease). When the directory does not know the
     * peer any more, announces again and re-publishes every buffer.
     *
     * @throws RendezvousException UNAVAILABLE when the directory is down; PERMISSION_DENIED when another process took
     *     the name
     */
    public synchronized void heartbeat() {
        checkOpen();
        try {
            ByteString t = token;
            rendezvous.invoke(s -> s.heartbeat(HeartbeatRequest.newBuilder()
                    .setName(peer.name())
                    .setLeaseToken(t)
                    .build()));
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                if (e.getStatus().getCode() == Status.Code.PERMISSION_DENIED && beat != null) {
                    beat.cancel(false); // another process owns the name now; renewing is pointless
                }
                throw ClientErrors.of("directory", rendezvous.target(), "heartbeat(" + peer.name() + ")", e);
            }
            reannounce();
        }
    }

    /** The directory forgot this peer: announce again and re-publish every buffer it had. Under this lock. */
    private void reannounce() {
        listener.reannouncing();
        announce();
        reannouncements++;
        listener.reannounced(revision);
        RendezvousException first = null;
        for (BufferInfo b : List.copyOf(published.values())) {
            try {
                sendPublish(b); // each buffer on its own: one refused name must not keep the others unpublished
            } catch (RendezvousException failed) {
                if (first == null) {
                    first = failed;
                } else {
                    first.addSuppressed(failed);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Publishes {@code buffer} under this peer (its owner field is filled in). Published again automatically after a
     * directory restart.
     *
     * <p>When the directory has forgotten this peer (its lease ran out while this process or the directory stalled, or
     * the directory restarted), announces again, re-publishes the others and then publishes this one.
     *
     * @throws RendezvousException INVALID_ARGUMENT for a bad buffer (e.g. a lane this peer did not announce),
     *     ALREADY_EXISTS when another peer publishes that name, RESOURCE_EXHAUSTED at capacity
     */
    public synchronized void publish(BufferInfo buffer) {
        checkOpen();
        Rendezvous.checkName("buffer name", buffer.name());
        try {
            sendPublish(buffer);
        } catch (RendezvousException e) {
            if (e.code() != Status.Code.NOT_FOUND) {
                throw e;
            }
            // the lease ran out before a heartbeat renewed it (this process or the directory stalled for longer than
            // the lease, or the directory restarted): the directory says to announce again, so do that and publish
            reannounce();
            sendPublish(buffer);
        }
        published.put(buffer.name(), buffer);
    }

    private void sendPublish(BufferInfo b) {
        rendezvous.call(
                "publish(" + b.name() + ")",
                s -> s.publish(PublishRequest.newBuilder()
                        .setOwner(peer.name())
                        .setLeaseToken(token)
                        .setBuffer(Wire.toProto(b))
                        .build()));
    }

    /** Removes a published buffer. @throws RendezvousException NOT_FOUND when it is not published */
    public synchronized void unpublish(String name) {
        checkOpen();
        Rendezvous.checkName("buffer name", name);
        rendezvous.call(
                "unpublish(" + name + ")",
                s -> s.unpublish(UnpublishRequest.newBuilder()
                        .setOwner(peer.name())
                        .setLeaseToken(token)
                        .setName(name)
                        .build()));
        published.remove(name);
    }

    /**
     * Looks up a buffer as this peer, so buffers whose access list names it are visible.
     *
     * @return the buffer, or empty when none has that name
     * @throws RendezvousException PERMISSION_DENIED when its access list does not name this peer
     */
    public Optional<BufferInfo> lookup(String name) {
        Rendezvous.checkName("buffer name", name);
        ByteString t;
        synchronized (this) {
            checkOpen();
            t = token;
        }
        return rendezvous.lookup(
                name,
                LookupRequest.newBuilder()
                        .setName(name)
                        .setRequester(peer.name())
                        .setLeaseToken(t)
                        .build());
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("announcement of " + peer.name() + " is closed");
        }
    }

    /**
     * Stops renewing and withdraws the peer and its buffers; if the directory is unreachable the lease simply runs out.
     * Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        rendezvous.forget(this);
        if (beat != null) {
            beat.cancel(false);
        }
        try {
            ByteString t = token;
            rendezvous.invoke(s -> s.withdraw(WithdrawRequest.newBuilder()
                    .setName(peer.name())
                    .setLeaseToken(t)
                    .build()));
        } catch (StatusRuntimeException e) {
            // NOT_FOUND/PERMISSION_DENIED: already gone or replaced; UNAVAILABLE: the lease will expire on its own
        }
    }
}
