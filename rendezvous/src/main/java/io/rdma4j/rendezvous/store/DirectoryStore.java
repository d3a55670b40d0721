package io.rdma4j.rendezvous.store;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.MembershipEvent;
import io.rdma4j.proto.v1.Peer;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The state of a directory: announced peers under leases, and the buffers they publish. The directory service
 * validates, authorizes and decides; a store only keeps state, and makes each change atomic with a compare-and-swap on
 * the entry the service read, so directory processes sharing one store need no lock between them.
 *
 * <p>Every method may throw {@link io.grpc.StatusRuntimeException} {@code UNAVAILABLE} when the store cannot be
 * reached; its description names the store and what to do.
 */
public interface DirectoryStore extends AutoCloseable {
    /**
     * One announcement.
     *
     * @param peer as announced
     * @param token the lease token that proves ownership of the name
     * @param leaseMillis the lease the store holds (it may round the requested one)
     * @param version identifies this announcement (an etcd lease id): a later announcement of the same name has another
     * @param revision the store's revision when it was written, which orders announcements
     */
    record StoredPeer(Peer peer, ByteString token, long leaseMillis, long version, long revision) {
        public String name() {
            return peer.getName();
        }
    }

    /**
     * A published buffer, whose owner is the announcement {@code ownerVersion} of {@code buffer.getOwner()}, written at
     * the store's {@code revision}.
     */
    record StoredBuffer(Buffer buffer, long ownerVersion, long revision) {}

    /** @return what and where the store is, for messages: {@code in memory}, {@code etcd at http://...} */
    String describe();

    /** @return the live announcement of {@code name} */
    Optional<StoredPeer> peer(String name);

    /** @return up to {@code limit} live peers with names after {@code after} ("" for the first), in name order */
    List<Peer> peers(String after, int limit);

    /** @return live peers (a store may count ones whose lease just ran out) */
    int peerCount();

    /** @return milliseconds until {@code peer}'s lease runs out unless renewed, or -1 when it is gone or unknown */
    long leaseRemainingMillis(StoredPeer peer);

    /** @return published buffers */
    int bufferCount();

    /**
     * Replaces {@code expected} (empty: no live announcement of the name) with {@code peer} under a new lease of about
     * {@code leaseMillis}, and republishes {@code keep} under it; the expected announcement's other buffers go.
     *
     * @return the new announcement, or empty when the name changed since {@code expected} was read
     */
    Optional<StoredPeer> announce(
            Optional<StoredPeer> expected, Peer peer, ByteString token, long leaseMillis, List<Buffer> keep);

    /** Renews the lease. @return false when the announcement is gone (expired, withdrawn or replaced) */
    boolean renew(StoredPeer peer);

    /** Removes the announcement and its buffers. @return false when it was already gone */
    boolean withdraw(StoredPeer peer);

    /** @return the buffer named {@code name} when its owner's announcement is live */
    Optional<StoredBuffer> buffer(String name);

    /** @return the buffers {@code owner} publishes */
    List<Buffer> buffersOf(StoredPeer owner);

    /**
     * Publishes {@code buffer} (its owner field set) under {@code owner}'s lease, replacing {@code expected}.
     *
     * @return false when the owner is gone or the name changed since {@code expected} was read
     */
    boolean publish(StoredPeer owner, Buffer buffer, Optional<StoredBuffer> expected);

    /** @return false when the owner or the buffer is gone */
    boolean unpublish(StoredPeer owner, String name);

    /**
     * Streams membership to {@code sink}: a JOINED event per live peer, SYNCED, then every change in order. The sink
     * must not block. {@code ended} is told once if the store ends the stream (unreachable, or closing).
     *
     * @return cancels the stream
     */
    AutoCloseable watch(Consumer<MembershipEvent> sink, Consumer<Status> ended);

    /**
     * Removes announcements whose lease ran out, with a LEFT(EXPIRED) event each; a store whose leases expire on their
     * own (etcd) does nothing. @return how many were removed
     */
    int expireLeases();

    /** Releases connections; idempotent. Announcements stay in a shared store until their leases run out. */
    @Override
    void close();
}
