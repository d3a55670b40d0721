package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.proto.v1.MembershipEvent;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.rendezvous.Backend;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import io.rdma4j.rendezvous.PeerEvent;
import io.rdma4j.rendezvous.PeerInfo;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * Conversions between the {@code rdma4j.v1} messages and the public records. Incoming messages are validated before
 * they get here.
 */
@SuppressWarnings("deprecation") // Lane.backend: still written and read for peers older than backend_id
public final class Wire {
    private Wire() {}

    public static io.rdma4j.proto.v1.Backend toProto(Backend b) {
        return switch (b) {
            case IBVERBS -> io.rdma4j.proto.v1.Backend.BACKEND_IBVERBS;
            case LIBFABRIC -> io.rdma4j.proto.v1.Backend.BACKEND_LIBFABRIC;
            case OTHER -> io.rdma4j.proto.v1.Backend.BACKEND_OTHER;
        };
    }

    /**
     * @return the lane's backend id: {@code backend_id} when set, otherwise the one the enum names (peers older than
     *     the field); empty when neither says (an enum value this version does not know: the lane is skipped)
     */
    public static Optional<String> backendId(Lane l) {
        if (!l.getBackendId().isEmpty()) {
            return Optional.of(l.getBackendId());
        }
        return switch (l.getBackend()) {
            case BACKEND_IBVERBS -> Optional.of(Backend.IBVERBS.id());
            case BACKEND_LIBFABRIC -> Optional.of(Backend.LIBFABRIC.id());
            default -> Optional.empty();
        };
    }

    public static Lane toProto(LaneInfo l) {
        return Lane.newBuilder()
                .setIndex(l.index())
                .setBackendId(l.backendId())
                .setBackend(toProto(l.backend()))
                .setProvider(l.provider())
                .setDevice(l.device())
                .setPciAddress(l.pciAddress() == null ? "" : l.pciAddress())
                .setNumaNode(l.numaNode())
                .setEndpoint(ByteString.copyFrom(l.endpoint()))
                .build();
    }

    public static Optional<LaneInfo> fromProto(Lane l) {
        return backendId(l)
                .map(id -> new LaneInfo(
                        l.getIndex(),
                        id,
                        l.getProvider(),
                        l.getDevice(),
                        l.getPciAddress().isEmpty() ? null : l.getPciAddress(),
                        l.getNumaNode(),
                        l.getEndpoint().toByteArray()));
    }

    /** @return the lanes this version understands, in order */
    public static List<LaneInfo> knownLanes(List<Lane> lanes) {
        List<LaneInfo> out = new ArrayList<>(lanes.size());
        for (Lane l : lanes) {
            fromProto(l).ifPresent(out::add);
        }
        return out;
    }

    public static Peer toProto(PeerInfo p) {
        Peer.Builder b = Peer.newBuilder()
                .setName(p.name())
                .setHandshakeAddress(p.handshakeAddress())
                .setHost(p.host())
                .setGeneration(p.generation());
        for (LaneInfo l : p.lanes()) {
            b.addLanes(toProto(l));
        }
        return b.build();
    }

    public static PeerInfo fromProto(Peer p) {
        return new PeerInfo(
                p.getName(), p.getHandshakeAddress(), p.getHost(), p.getGeneration(), knownLanes(p.getLanesList()));
    }

    public static io.rdma4j.proto.v1.MemoryKind toProto(MemoryKind k) {
        return switch (k) {
            case HOST -> io.rdma4j.proto.v1.MemoryKind.MEMORY_KIND_HOST;
            case CUDA -> io.rdma4j.proto.v1.MemoryKind.MEMORY_KIND_CUDA;
        };
    }

    public static Buffer toProto(BufferInfo b) {
        Locality loc = b.locality();
        Buffer.Builder out = Buffer.newBuilder()
                .setName(b.name())
                .setOwner(b.owner())
                .setLength(b.length())
                .setMemoryKind(toProto(b.memoryKind()))
                .setLocality(io.rdma4j.proto.v1.Locality.newBuilder()
                        .setNumaNode(loc.numaNode())
                        .setDeviceOrdinal(loc.deviceOrdinal())
                        .setPciAddress(loc.pciAddress() == null ? "" : loc.pciAddress()))
                .setGeneration(b.generation());
        for (LaneKey k : b.lanes()) {
            out.addLanes(io.rdma4j.proto.v1.LaneKey.newBuilder()
                    .setLane(k.lane())
                    .setAddress(k.address())
                    .setKey(k.key()));
        }
        out.addAllAccess(b.access().stream().sorted().toList());
        return out.build();
    }

    /** @throws IllegalArgumentException when the memory kind is one this version does not know */
    public static BufferInfo fromProto(Buffer b) {
        MemoryKind kind = switch (b.getMemoryKind()) {
            case MEMORY_KIND_HOST -> MemoryKind.HOST;
            case MEMORY_KIND_CUDA -> MemoryKind.CUDA;
            default ->
                throw new IllegalArgumentException("buffer " + b.getName() + " has memory kind "
                        + b.getMemoryKindValue() + ", which this rdma4j version does not know; upgrade it");
        };
        io.rdma4j.proto.v1.Locality l = b.getLocality();
        List<LaneKey> lanes = new ArrayList<>(b.getLanesCount());
        for (io.rdma4j.proto.v1.LaneKey k : b.getLanesList()) {
            lanes.add(new LaneKey(k.getLane(), k.getAddress(), k.getKey()));
        }
        return new BufferInfo(
                b.getName(),
                b.getOwner(),
                b.getLength(),
                kind,
                new Locality(
                        l.getNumaNode(), l.getDeviceOrdinal(), l.getPciAddress().isEmpty() ? null : l.getPciAddress()),
                b.getGeneration(),
                lanes,
                new LinkedHashSet<>(b.getAccessList()));
    }

    public static PeerEvent fromProto(MembershipEvent e) {
        PeerEvent.Kind kind = switch (e.getKind()) {
            case KIND_JOINED -> PeerEvent.Kind.JOINED;
            case KIND_UPDATED -> PeerEvent.Kind.UPDATED;
            case KIND_LEFT -> PeerEvent.Kind.LEFT;
            case KIND_SYNCED -> PeerEvent.Kind.SYNCED;
            default -> null;
        };
        if (kind == null) {
            return null;
        }
        PeerEvent.Reason reason = switch (e.getReason()) {
            case REASON_ANNOUNCED -> PeerEvent.Reason.ANNOUNCED;
            case REASON_WITHDRAWN -> PeerEvent.Reason.WITHDRAWN;
            case REASON_EXPIRED -> PeerEvent.Reason.EXPIRED;
            default -> PeerEvent.Reason.UNSPECIFIED;
        };
        return new PeerEvent(kind, e.hasPeer() ? fromProto(e.getPeer()) : null, reason, e.getRevision());
    }
}
