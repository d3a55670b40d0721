package io.rdma4j.engine.internal;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.rendezvous.LaneInfo;
import java.util.List;
import java.util.Locale;

/**
 * Our lanes as the directory and the handshake describe them, and which of a peer's lanes ours can reach. A lane is
 * named by its backend's own id ({@link EngineBackend#name()}, lower-cased): the engine knows no backend by name, and
 * two lanes pair only when their ids and providers are equal.
 */
final class WireLanes {
    final EngineBackend backend;
    final String backendId;
    final List<LaneDescriptor> descriptors;

    WireLanes(EngineBackend backend, List<LaneDescriptor> descriptors) {
        this.backend = backend;
        this.backendId = idOf(backend);
        this.descriptors = descriptors;
    }

    /** {@return the id {@code backend} announces itself by: its name, lower-cased, checked against the wire's rule} */
    static String idOf(EngineBackend backend) {
        String id = String.valueOf(backend.name()).toLowerCase(Locale.ROOT);
        if (!LaneInfo.isValidBackendId(id)) {
            throw new BackendUnavailableException(
                    "backend name '" + backend.name() + "' cannot go on the wire as a" + " backend id: it must match "
                            + LaneInfo.BACKEND_ID_PATTERN,
                    null);
        }
        return id;
    }

    /** {@return lane {@code lane}'s description with the endpoint of connection {@code connection}} */
    LaneInfo describe(int lane, int connection) {
        LaneDescriptor d = descriptors.get(lane);
        return new LaneInfo(
                d.index(),
                backendId,
                backend.provider(),
                d.device(),
                d.pciAddress(),
                d.numaNode(),
                backend.endpointInfo(lane, connection));
    }

    boolean compatible(LaneInfo l) {
        return l.backendId().equals(backendId) && l.provider().equals(backend.provider());
    }

    /** {@return why none of {@code lanes} pairs with ours, naming both sides' backend ids and providers} */
    String mismatch(List<LaneInfo> lanes) {
        return "it runs " + lanes.stream().map(WireLanes::name).distinct().toList() + ", this engine runs "
                + name(backendId, backend.provider()) + "; both ends must use the same backend (and provider)";
    }

    private static String name(LaneInfo l) {
        return name(l.backendId(), l.provider());
    }

    private static String name(String id, String provider) {
        return provider.isEmpty() || provider.equals(id) ? id : id + " (" + provider + ")";
    }
}
