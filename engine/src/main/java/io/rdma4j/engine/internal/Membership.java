package io.rdma4j.engine.internal;

import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.UnknownBufferException;
import io.rdma4j.engine.UnknownPeerException;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.HandshakeServer;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.PeerEvent;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * This engine in the directory: its announcement (lanes, handshake address, lease), the watch on the other members, and
 * the peers it resolved. A peer that leaves or restarts is lost: its transfers fail and its inbox here goes.
 *
 * <p>When our own lease lapses, the others drop what they had with us, and so do we; but the heartbeat that finds the
 * directory forgot us announces us again on its own thread, and the watch may tell us of the lapse only after that,
 * once peers have connected to us afresh. So our announcements are numbered: what we make (links, inboxes) carries the
 * number standing then, and a lapse the directory recorded before our latest announcement drops only what came before
 * it.
 */
final class Membership implements Announcement.Listener {
    private final String name;
    private final long generation;
    private final Rendezvous rendezvous;
    private final HandshakeServer handshakeServer;
    private final WireLanes wire;
    private final int localLanes;
    private final Inbound inbound;
    private final ActiveTransfers active;
    private final ScheduledExecutorService timer;
    private final BooleanSupplier closing;
    private final Map<String, PeerLink> peers = new ConcurrentHashMap<>();
    private volatile Announcement announcement;
    private volatile Rendezvous.Watch watch;
    /** Our standing announcement: 0 the first, one more each time the directory forgot us (written under this). */
    private volatile int announcementNumber;
    /** The directory's revision of that announcement; {@link Long#MAX_VALUE} while it is on its way (under this). */
    private long announcedAt;
    /** The directory's revision of our own lease lapse we last heard of (0: none). */
    private volatile long lapseRevision;

    Membership(
            String name,
            long generation,
            Rendezvous rendezvous,
            HandshakeServer handshakeServer,
            WireLanes wire,
            int localLanes,
            Inbound inbound,
            ActiveTransfers active,
            ScheduledExecutorService timer,
            BooleanSupplier closing) {
        this.name = name;
        this.generation = generation;
        this.rendezvous = rendezvous;
        this.handshakeServer = handshakeServer;
        this.wire = wire;
        this.localLanes = localLanes;
        this.inbound = inbound;
        this.active = active;
        this.timer = timer;
        this.closing = closing;
    }

    /** Announces our lanes under our lease and starts watching the others; {@return the announcement} */
    Announcement announce(Duration lease) {
        List<LaneInfo> announced = new ArrayList<>();
        for (int i = 0; i < localLanes; i++) {
            announced.add(wire.describe(i, wire.backend.prepareConnection(i)));
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "localhost";
        }
        Announcement a = rendezvous.announce(
                new PeerInfo(name, handshakeServer.address(), host, generation, announced), lease, this);
        synchronized (this) {
            if (announcementNumber == 0) {
                announcedAt = a.revision();
            }
        }
        announcement = a;
        startWatch();
        return a;
    }

    /**
     * The directory forgot us (our lease lapsed, or it restarted) and we are about to announce again: what peers
     * connect from now on belongs to the new announcement, and none gets back an answer given under the old one (a peer
     * that saw us leave dropped what it gave).
     */
    @Override
    public void reannouncing() {
        synchronized (this) {
            announcementNumber++;
            announcedAt = Long.MAX_VALUE;
            inbound.announcedAgain(announcementNumber);
        }
        handshakeServer.renewSessions();
    }

    @Override
    public synchronized void reannounced(long revision) {
        announcedAt = revision;
    }

    private void startWatch() {
        if (closing.getAsBoolean()) {
            return;
        }
        watch = rendezvous.watch(this::onPeerEvent, err -> {
            if (!closing.getAsBoolean()) {
                timer.schedule(this::startWatch, 1, TimeUnit.SECONDS);
            }
        });
    }

    /** Resolves {@code peerName} in the directory; a new generation of a known peer replaces (and loses) the old. */
    BufferImpls.PeerImpl peer(String peerName) {
        Objects.requireNonNull(peerName, "peer name");
        if (peerName.isEmpty()) {
            throw new InvalidArgumentException("peer name is empty: pass the name the peer's engine was built with");
        }
        PeerInfo info;
        try {
            info = rendezvous
                    .resolve(peerName)
                    .orElseThrow(() -> new UnknownPeerException("no peer '" + peerName
                            + "' is announced in the directory " + rendezvous.target()
                            + ": start it first, or check the name"));
        } catch (RendezvousException e) {
            throw new UnknownPeerException("cannot resolve peer '" + peerName + "': " + e.getMessage(), e);
        }
        if (info.lanes().stream().noneMatch(wire::compatible)) {
            throw new UnknownPeerException("peer '" + peerName + "' has no lane this engine can connect to: "
                    + wire.mismatch(info.lanes()) + "; its lanes: " + info.lanes());
        }
        PeerLink link = peers.compute(peerName, (k, old) -> {
            if (old != null && old.generation == info.generation() && !old.lost()) {
                return old;
            }
            if (old != null) {
                lose(old, "it restarted (generation " + old.generation + " -> " + info.generation() + ")");
            }
            return new PeerLink(info, localLanes, announcementNumber);
        });
        return new BufferImpls.PeerImpl(this, link);
    }

    /** Looks up buffer {@code bufferName} that {@code peer} published (for us). */
    RemoteBuffer lookup(BufferImpls.PeerImpl peer, String bufferName) {
        if (closing.getAsBoolean()) {
            throw new ClosedException("transfer engine " + name);
        }
        Names.check("buffer", bufferName);
        Optional<BufferInfo> info;
        try {
            info = announcement.lookup(Names.wire(peer.name(), bufferName));
        } catch (RendezvousException e) {
            throw new UnknownBufferException(
                    "peer '" + peer.name() + "' buffer '" + bufferName + "': " + e.getMessage(), e);
        }
        BufferInfo b = info.orElseThrow(() -> new UnknownBufferException("peer '" + peer.name()
                + "' has published no buffer '" + bufferName + "': publish it there first with engine.publish(\""
                + bufferName + "\", buffer, access)"));
        if (!b.owner().isEmpty() && !b.owner().equals(peer.name())) {
            throw new UnknownBufferException(
                    "buffer '" + bufferName + "' belongs to '" + b.owner() + "', not to '" + peer.name() + "'");
        }
        return new BufferImpls.Remote(peer, bufferName, b);
    }

    /**
     * {@return the directory's revision of our own lease lapse we last heard of (0: none)} Peers we connect to after it
     * keep what they give us when they hear of that lapse later than we did.
     */
    long lapseRevision() {
        return lapseRevision;
    }

    /** {@return the peers resolved so far (their channels close with the engine)} */
    Collection<PeerLink> peers() {
        return peers.values();
    }

    private void onPeerEvent(PeerEvent e) {
        if (e.peer() == null) {
            return;
        }
        if (e.peer().name().equals(name)) {
            if (e.kind() == PeerEvent.Kind.LEFT
                    && e.reason() == PeerEvent.Reason.EXPIRED
                    && e.peer().generation() == generation) {
                leaseLapsed(e.revision());
            }
            return;
        }
        String who = e.peer().name();
        switch (e.kind()) {
            case LEFT -> {
                String why =
                        e.reason() == PeerEvent.Reason.EXPIRED ? "its lease expired" : "it withdrew from the directory";
                PeerLink link = peers.remove(who);
                if (link != null) {
                    lose(link, why);
                }
                boolean dropped = true;
                if (e.reason() == PeerEvent.Reason.EXPIRED) {
                    dropped = inbound.dropLapsed(who, e.revision());
                } else {
                    inbound.drop(who);
                }
                if (dropped) {
                    // so that the same peer generation coming back gets a fresh connection and inbox, not a stored
                    // answer; one that connected after it heard of this lapse keeps what we answered it then
                    handshakeServer.forget(who);
                }
            }
            case UPDATED, JOINED -> {
                PeerLink link = peers.get(who);
                if (link != null && link.generation != e.peer().generation()) {
                    peers.remove(who, link);
                    lose(
                            link,
                            "it restarted (generation " + link.generation + " -> "
                                    + e.peer().generation() + ")");
                }
            }
            default -> {}
        }
    }

    /**
     * Our own lease lapsed, as the directory recorded at {@code revision} (this process stalled for longer than it; our
     * announcement renews itself at the next beat): every peer saw us leave and dropped its connections with us and our
     * inbox there. Ours go too, so that the next transfer either way connects afresh instead of writing into state the
     * other side no longer has. If we announced again before hearing of it, what we made since stays: peers made it
     * after they saw us leave. (A directory that restarted forgot everyone without anyone leaving: nothing is dropped
     * then.)
     */
    private void leaseLapsed(long revision) {
        lapseRevision = revision; // the watch tells events in order (a restarted in-memory directory counts anew)
        int before;
        synchronized (this) {
            boolean earlier = announcementNumber > 0 && revision < announcedAt;
            before = earlier ? announcementNumber : Integer.MAX_VALUE;
        }
        for (PeerLink link : List.copyOf(peers.values())) {
            if (link.announcement < before && peers.remove(link.name, link)) {
                lose(
                        link,
                        "this engine's own lease lapsed (it stalled for longer than the lease) and its peers dropped"
                                + " its connections: resolve the peer again with engine.peer(\"" + link.name + "\")");
            }
        }
        inbound.dropBefore(before);
        if (before == Integer.MAX_VALUE) {
            handshakeServer.forgetAll(); // otherwise renewed when we announced again: none is answered from before it
        }
    }

    private void lose(PeerLink link, String why) {
        synchronized (link) {
            if (link.lostReason != null) {
                return;
            }
            link.lostReason = why;
        }
        for (TransferImpl t : active.snapshot(link)) {
            t.fail(new PeerLostException("transfer of " + t.total + " bytes with '" + link.name
                    + "' failed: the peer is gone (" + why + ") after " + t.bytesCompleted() + " bytes"));
        }
    }

    /** Stops watching the directory. */
    void stopWatching() {
        Rendezvous.Watch w = watch;
        if (w != null) {
            w.close();
        }
    }

    /** Withdraws our announcement (and so our published buffers). */
    void withdraw() {
        Announcement a = announcement;
        if (a != null) {
            a.close();
        }
    }
}
