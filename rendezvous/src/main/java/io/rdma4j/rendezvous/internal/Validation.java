package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.Buffer;
import io.rdma4j.proto.v1.Lane;
import io.rdma4j.proto.v1.LaneKey;
import io.rdma4j.proto.v1.Peer;
import io.rdma4j.rendezvous.Backend;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.QpInfo;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks every field of an incoming message against the contract's limits before anything is stored or handed on.
 * Violations are {@code INVALID_ARGUMENT} naming the field, the value's problem and the limit.
 */
@SuppressWarnings("deprecation") // Lane.backend: checked against backend_id for peers that send both
public final class Validation {
    /**
     * Largest message either side accepts (gRPC's {@code maxInboundMessageSize}); larger ones get RESOURCE_EXHAUSTED.
     */
    public static final int MAX_MESSAGE_BYTES = 1 << 20;

    public static final int MAX_NAME_CHARS = 128;
    public static final int MAX_LANES = 64;
    public static final int MAX_LANE_INDEX = 1023;
    public static final int MAX_ENDPOINT_BYTES = 512;
    public static final int MAX_SHORT_STRING_CHARS = 64;
    public static final int MAX_BACKEND_ID_CHARS = 32;
    public static final int MAX_HOST_CHARS = 253;
    public static final int MAX_ADDRESS_CHARS = 300;
    public static final int MAX_ACCESS_ENTRIES = 1024;
    public static final int MAX_NUMA_NODE = 1023;
    public static final int MAX_DEVICE_ORDINAL = 1023;
    public static final int TOKEN_BYTES = 16;
    public static final int MAX_PAGE_SIZE = 1000;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:@/-]{0," + (MAX_NAME_CHARS - 1) + "}");
    private static final Pattern PCI = Pattern.compile("[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");

    private Validation() {}

    public static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    /** A peer or buffer name. */
    public static void name(String what, String value) {
        if (value.isEmpty()) {
            throw invalid(what + " is empty");
        }
        if (value.length() > MAX_NAME_CHARS) {
            throw invalid(what + " is " + value.length() + " characters; the limit is " + MAX_NAME_CHARS);
        }
        if (!NAME.matcher(value).matches()) {
            throw invalid(what + " '" + printable(value)
                    + "' is not a valid name: use letters, digits and . _ : @ / -, starting with a letter or digit");
        }
    }

    /** The name check as a predicate, for callers outside the server. */
    public static boolean isValidName(String value) {
        return value != null
                && value.length() <= MAX_NAME_CHARS
                && NAME.matcher(value).matches();
    }

    private static void text(String what, String value, int max) {
        if (value.length() > max) {
            throw invalid(what + " is " + value.length() + " characters; the limit is " + max);
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw invalid(what + " contains control character 0x" + Integer.toHexString(c) + " at " + i);
            }
        }
    }

    private static void pci(String what, String value) {
        if (!value.isEmpty() && !PCI.matcher(value).matches()) {
            throw invalid(what + " '" + printable(value) + "' is not a PCI address of the form dddd:bb:dd.f");
        }
    }

    private static void range(String what, long value, long min, long max) {
        if (value < min || value > max) {
            throw invalid(what + " is " + value + "; it must be in " + min + ".." + max);
        }
    }

    public static void token(String what, ByteString token) {
        if (token.size() != TOKEN_BYTES) {
            throw invalid(what + " must be " + TOKEN_BYTES + " bytes (as the directory or responder issued it), got "
                    + token.size());
        }
    }

    /** A lane; lanes of unknown backends get the size checks only (their content is not ours to judge). */
    public static void lane(String what, Lane l) {
        range(what + ".index", l.getIndex(), 0, MAX_LANE_INDEX);
        text(what + ".provider", l.getProvider(), MAX_SHORT_STRING_CHARS);
        text(what + ".device", l.getDevice(), MAX_SHORT_STRING_CHARS);
        pci(what + ".pci_address", l.getPciAddress());
        range(what + ".numa_node", l.getNumaNode(), -1, MAX_NUMA_NODE);
        int n = l.getEndpoint().size();
        if (n == 0 || n > MAX_ENDPOINT_BYTES) {
            throw invalid(what + ".endpoint is " + n + " bytes; it must be 1.." + MAX_ENDPOINT_BYTES);
        }
        backendId(what, l);
        if (Wire.backendId(l).filter(Backend.IBVERBS.id()::equals).isPresent() && n != QpInfo.BYTES) {
            throw invalid(what + ".endpoint is " + n + " bytes; an ibverbs endpoint is the " + QpInfo.BYTES
                    + "-byte QPInfo (!IIH16sBB)");
        }
    }

    /**
     * backend_id names the lane's backend; empty is allowed only where the deprecated enum names one (peers older than
     * the field). Where both are given, they must agree: a known enum value with another id would pair a lane with
     * lanes it cannot talk to on older readers.
     */
    private static void backendId(String what, Lane l) {
        String id = l.getBackendId();
        io.rdma4j.proto.v1.Backend b = l.getBackend();
        if (id.isEmpty()) {
            if (b == io.rdma4j.proto.v1.Backend.BACKEND_UNSPECIFIED || b == io.rdma4j.proto.v1.Backend.BACKEND_OTHER) {
                throw invalid(what + ".backend_id is empty and " + what + ".backend is " + b
                        + ": name the backend, e.g. backend_id \"libfabric\"");
            }
            return;
        }
        if (id.length() > MAX_BACKEND_ID_CHARS) {
            throw invalid(what + ".backend_id is " + id.length() + " characters; the limit is " + MAX_BACKEND_ID_CHARS);
        }
        if (!LaneInfo.isValidBackendId(id)) {
            throw invalid(what + ".backend_id '" + printable(id) + "' is not a backend id: use lower-case letters,"
                    + " digits and . _ -, starting with a letter or digit (" + LaneInfo.BACKEND_ID_PATTERN + ")");
        }
        String named = switch (b) {
            case BACKEND_IBVERBS -> Backend.IBVERBS.id();
            case BACKEND_LIBFABRIC -> Backend.LIBFABRIC.id();
            default -> null;
        };
        if (named != null && !named.equals(id)) {
            throw invalid(what + ".backend is " + b + " but " + what + ".backend_id is '" + id
                    + "': they must name the same backend (BACKEND_OTHER for any id but ibverbs and libfabric)");
        }
    }

    public static void lanes(String what, List<Lane> lanes, boolean allowEmpty) {
        if (lanes.size() > MAX_LANES) {
            throw invalid(what + " has " + lanes.size() + " lanes; the limit is " + MAX_LANES);
        }
        if (!allowEmpty && lanes.isEmpty()) {
            throw invalid(what + " has no lanes");
        }
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < lanes.size(); i++) {
            Lane l = lanes.get(i);
            lane(what + ".lanes[" + i + "]", l);
            if (!seen.add(l.getIndex())) {
                throw invalid(what + " has lane index " + l.getIndex() + " twice");
            }
        }
    }

    public static void peer(Peer p) {
        name("peer.name", p.getName());
        text("peer.handshake_address", p.getHandshakeAddress(), MAX_ADDRESS_CHARS);
        if (p.getHandshakeAddress().chars().anyMatch(Character::isWhitespace)) {
            throw invalid("peer.handshake_address contains whitespace");
        }
        text("peer.host", p.getHost(), MAX_HOST_CHARS);
        lanes("peer " + p.getName(), p.getLanesList(), true);
    }

    /**
     * A buffer as published or described.
     *
     * @param ownerLanes the owner's lane indexes; every key must name one of them
     */
    public static void buffer(Buffer b, Set<Integer> ownerLanes) {
        name("buffer.name", b.getName());
        if (b.getLength() <= 0) { // uint64 on the wire: >= 2^63 reads negative
            throw invalid("buffer " + b.getName() + ": length must be > 0 and < 2^63, got "
                    + Long.toUnsignedString(b.getLength()));
        }
        if (b.getMemoryKindValue() == 0) {
            throw invalid("buffer " + b.getName() + ": memory_kind is unspecified");
        }
        range("buffer " + b.getName() + " locality.numa_node", b.getLocality().getNumaNode(), -1, MAX_NUMA_NODE);
        range(
                "buffer " + b.getName() + " locality.device_ordinal",
                b.getLocality().getDeviceOrdinal(),
                -1,
                MAX_DEVICE_ORDINAL);
        pci("buffer " + b.getName() + " locality.pci_address", b.getLocality().getPciAddress());
        if (b.getGeneration() < 0) { // uint64 on the wire: >= 2^63 reads negative
            throw invalid("buffer " + b.getName() + ": generation must be < 2^63");
        }
        if (b.getLanesCount() == 0 || b.getLanesCount() > MAX_LANES) {
            throw invalid(
                    "buffer " + b.getName() + " has " + b.getLanesCount() + " lane keys; it must have 1.." + MAX_LANES);
        }
        Set<Integer> seen = new HashSet<>();
        for (LaneKey k : b.getLanesList()) {
            if (!seen.add(k.getLane())) {
                throw invalid("buffer " + b.getName() + " has lane " + k.getLane() + " twice");
            }
            if (ownerLanes != null && !ownerLanes.contains(k.getLane())) {
                throw invalid("buffer " + b.getName() + " names lane " + k.getLane()
                        + ", which its owner did not announce (lanes " + ownerLanes + ")");
            }
        }
        if (b.getAccessCount() > MAX_ACCESS_ENTRIES) {
            throw invalid("buffer " + b.getName() + " access list has " + b.getAccessCount() + " entries; the limit is "
                    + MAX_ACCESS_ENTRIES);
        }
        for (String a : b.getAccessList()) {
            name("buffer " + b.getName() + " access entry", a);
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.codePoints().limit(MAX_NAME_CHARS + 8).forEach(c -> {
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\x%02x", c));
            } else {
                b.appendCodePoint(c);
            }
        });
        return s.length() > MAX_NAME_CHARS + 8 ? b + "..." : b.toString();
    }
}
