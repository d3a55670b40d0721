package io.rdma4j.engine.internal;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.rendezvous.Backend;
import io.rdma4j.rendezvous.LaneInfo;
import java.util.List;

/** Our lanes as the directory and the handshake describe them, and which of a peer's lanes ours can reach. */
final class WireLanes {
    final EngineBackend backend;
    final Backend wire;
    final List<LaneDescriptor> descriptors;

    WireLanes(EngineBackend backend, List<LaneDescriptor> descriptors) {
        this.backend = backend;
        this.wire = backend.name().equalsIgnoreCase("ibverbs") ? Backend.IBVERBS : Backend.LIBFABRIC;
        this.descriptors = descriptors;
    }

    /** {@return lane {@code lane}'s description with the endpoint of connection {@code connection}} */
    LaneInfo describe(int lane, int connection) {
        LaneDescriptor d = descriptors.get(lane);
        return new LaneInfo(d.index(), wire, wire == Backend.LIBFABRIC ? backend.provider() : "", d.device(),
                d.pciAddress(), d.numaNode(), backend.endpointInfo(lane, connection));
    }

    boolean compatible(LaneInfo l) {
        return l.backend() == wire && (wire != Backend.LIBFABRIC || l.provider().equals(backend.provider()));
    }
}
