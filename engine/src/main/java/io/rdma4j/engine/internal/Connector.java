package io.rdma4j.engine.internal;

import io.rdma4j.Closeables;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.HandshakeClient;
import io.rdma4j.rendezvous.HandshakeResult;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.LanePairing;
import io.rdma4j.rendezvous.RendezvousException;
import io.rdma4j.rendezvous.Security;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The initiator's side of the handshake: on the first transfer to a peer, offers it our healthy lanes, connects the
 * pairs it answers, and opens the {@link OutChannel} into the inbox it gave us. {@link HandshakeService} is the other
 * side.
 */
final class Connector implements AutoCloseable {
    private final String name;
    private final long generation;
    private final Security security;
    private final Duration deadline;
    private final EngineBackend backend;
    private final LaneRuntime[] lanes;
    private final WireLanes wire;
    private final Map<String, HandshakeClient> handshakeClients = new ConcurrentHashMap<>();
    /** The directory's revision of our own lease lapse we last heard of (0: none), told to each peer we connect. */
    private final LongSupplier lapseRevision;

    Connector(
            String name,
            long generation,
            Security security,
            Duration deadline,
            LaneRuntime[] lanes,
            WireLanes wire,
            LongSupplier lapseRevision) {
        this.name = name;
        this.lapseRevision = lapseRevision;
        this.generation = generation;
        this.security = security;
        this.deadline = deadline;
        this.backend = wire.backend;
        this.lanes = lanes;
        this.wire = wire;
    }

    /** Connects our lanes to {@code link}'s peer and opens the notification channel into its inbox, once. */
    void ensureConnected(PeerLink link) {
        if (link.connected) {
            return;
        }
        synchronized (link) {
            if (link.connected) {
                return;
            }
            if (link.lost()) {
                throw new PeerLostException("peer '" + link.name + "' is gone: " + link.lostReason);
            }
            List<LaneInfo> offer = new ArrayList<>();
            int[] conns = new int[lanes.length];
            Arrays.fill(conns, -1);
            for (int i = 0; i < lanes.length; i++) {
                if (lanes[i].failed) {
                    continue;
                }
                conns[i] = backend.prepareConnection(i);
                offer.add(wire.describe(i, conns[i]));
            }
            HandshakeResult result;
            try {
                HandshakeClient client = handshakeClients.computeIfAbsent(
                        link.info.handshakeAddress(), a -> HandshakeClient.connect(a, security, deadline));
                result = client.connect(name, generation, lapseRevision.getAsLong(), link.name, offer);
                if (result.responderGeneration() != link.generation) {
                    throw new PeerLostException("peer '" + link.name + "' restarted (generation " + link.generation
                            + " -> " + result.responderGeneration() + "): resolve it again with engine.peer(\""
                            + link.name + "\")");
                }
                for (LanePairing pr : result.lanes()) {
                    int l = pr.initiatorLane();
                    if (l < 0 || l >= lanes.length || conns[l] < 0 || link.connection[l] >= 0) {
                        continue;
                    }
                    backend.connect(l, conns[l], pr.responderLane().endpoint());
                    link.connection[l] = conns[l];
                    link.remoteLane[l] = pr.responderLane().index();
                    conns[l] = -1;
                }
                BufferInfo inbox = client.describe(result, Names.inbox(name))
                        .orElseThrow(() -> new TransferException(
                                "peer '" + link.name + "' offered no notification inbox after the handshake"));
                int maxLane = 0;
                for (LaneKey k : inbox.lanes()) {
                    maxLane = Math.max(maxLane, k.lane() + 1);
                }
                long[] base = new long[maxLane];
                long[] key = new long[maxLane];
                for (LaneKey k : inbox.lanes()) {
                    base[k.lane()] = k.address();
                    key[k.lane()] = k.key();
                }
                int slots = NotificationRecord.slotsOf(inbox.length());
                if (inbox.generation() <= 0 || inbox.generation() >= (1 << 16) || slots < 1) {
                    throw new TransferException("peer '" + link.name + "' described a malformed inbox: " + inbox);
                }
                link.channel = new OutChannel(backend, lanes, slots, (int) inbox.generation(), base, key);
                link.session = result;
            } catch (RendezvousException e) {
                throw new PeerLostException(
                        "handshake with peer '" + link.name + "' at " + link.info.handshakeAddress() + " failed: "
                                + e.getMessage(),
                        e);
            } finally {
                for (int i = 0; i < conns.length; i++) {
                    if (conns[i] >= 0) {
                        backend.disconnect(i, conns[i]);
                    }
                }
            }
            boolean any = false;
            for (int c : link.connection) {
                any |= c >= 0;
            }
            if (!any) {
                throw new TransferException("peer '" + link.name + "' paired none of our lanes");
            }
            link.connected = true;
        }
    }

    @Override
    public void close() {
        Closeables.closeAll(handshakeClients.values());
    }
}
