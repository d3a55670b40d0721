package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.HandshakeHandler;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LanePairing;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * The responder's side of the handshake: pairs an initiator's lanes rail to rail with our healthy ones, gives it an
 * inbox ({@link Inbound}), and describes our inbox and published buffers to it.
 */
final class HandshakeService implements HandshakeHandler {
    private final String name;
    private final EngineBackend backend;
    private final LaneRuntime[] lanes;
    private final WireLanes wire;
    private final Inbound inbound;
    private final Publications publications;
    private final BooleanSupplier closing;

    HandshakeService(
            String name,
            LaneRuntime[] lanes,
            WireLanes wire,
            Inbound inbound,
            Publications publications,
            BooleanSupplier closing) {
        this.name = name;
        this.backend = wire.backend;
        this.lanes = lanes;
        this.wire = wire;
        this.inbound = inbound;
        this.publications = publications;
        this.closing = closing;
    }

    @Override
    public List<LanePairing> connect(String initiator, long initiatorGeneration, List<LaneInfo> remoteLanes) {
        return connect(initiator, initiatorGeneration, 0, remoteLanes);
    }

    @Override
    public List<LanePairing> connect(
            String initiator, long initiatorGeneration, long lapseRevision, List<LaneInfo> remoteLanes) {
        if (closing.getAsBoolean()) {
            throw new IllegalStateException("engine " + name + " is closing");
        }
        inbound.drop(initiator);
        List<LaneInfo> usable = remoteLanes.stream().filter(wire::compatible).toList();
        if (usable.isEmpty() && !remoteLanes.isEmpty()) {
            throw new IllegalArgumentException("engine " + name + " has no lane '" + initiator + "' can connect to: "
                    + wire.mismatch(remoteLanes));
        }
        List<Integer> healthy = new ArrayList<>();
        for (LaneRuntime l : lanes) {
            if (!l.failed) {
                healthy.add(l.lane);
            }
        }
        if (healthy.isEmpty()) {
            throw new IllegalStateException("engine " + name + " has no healthy lane");
        }
        List<LanePairing> out = new ArrayList<>();
        int[] myLanes = new int[usable.size()];
        int[] myConns = new int[usable.size()];
        try {
            for (int k = 0; k < usable.size(); k++) {
                LaneInfo ri = usable.get(k);
                int local = healthy.get(k % healthy.size());
                int conn = backend.prepareConnection(local);
                myLanes[k] = local;
                myConns[k] = conn;
                backend.connect(local, conn, ri.endpoint());
                out.add(new LanePairing(ri.index(), wire.describe(local, conn)));
            }
        } catch (RuntimeException e) {
            for (int k = 0; k < out.size(); k++) {
                backend.disconnect(myLanes[k], myConns[k]);
            }
            throw e;
        }
        inbound.add(initiator, initiatorGeneration, lapseRevision, myLanes, myConns);
        return out;
    }

    @Override
    public Optional<BufferInfo> describe(String bufferName) {
        Optional<BufferInfo> inbox = inbound.describeInbox(bufferName);
        return inbox.isPresent() ? inbox : publications.describe(bufferName);
    }

    @Override
    public void peerRestarted(String initiator, long previousGeneration, long newGeneration) {
        inbound.drop(initiator);
    }
}
