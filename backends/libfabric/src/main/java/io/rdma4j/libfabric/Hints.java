package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_MR_MODE;
import static io.rdma4j.libfabric.ffi.FabricH.DOMAIN_NAME;
import static io.rdma4j.libfabric.ffi.FabricH.EP_TYPE;
import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_NAME;
import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_PROV_NAME;
import static io.rdma4j.libfabric.ffi.FabricH.FI_CONTEXT;
import static io.rdma4j.libfabric.ffi.FabricH.FI_CONTEXT2;
import static io.rdma4j.libfabric.ffi.FabricH.FI_EP_RDM;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_ALLOCATED;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_BASIC;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_COLLECTIVE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_ENDPOINT;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_HMEM;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_LOCAL;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_MMU_NOTIFY;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_PROV_KEY;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_RAW;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_RMA_EVENT;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_SCALABLE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MR_VIRT_ADDR;
import static io.rdma4j.libfabric.ffi.FabricH.FI_MSG;
import static io.rdma4j.libfabric.ffi.FabricH.FI_READ;
import static io.rdma4j.libfabric.ffi.FabricH.FI_RECV;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_READ;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_WRITE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_RMA;
import static io.rdma4j.libfabric.ffi.FabricH.FI_SEND;
import static io.rdma4j.libfabric.ffi.FabricH.FI_WRITE;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_CAPS;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_DOMAIN_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_EP_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_FABRIC_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_MODE;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_RX_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_TX_ATTR;

import io.rdma4j.libfabric.ffi.FabricH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What to ask {@code fi_getinfo} for. {@link #rdm()} asks for a reliable-datagram endpoint with messages and RMA in
 * both directions, and offers every memory-registration mode this binding honours ({@link #SUPPORTED_MR_MODE}) and the
 * context modes ({@code FI_CONTEXT}, {@code FI_CONTEXT2}); the provider picks what it needs. No provider is preferred
 * or excluded unless {@link #provider} names one.
 */
public final class Hints {
    /**
     * The mr_mode bits {@link MemoryRegion} and {@link Endpoint} honour: every buffer an operation touches is a
     * registered region whose descriptor is passed ({@code FI_MR_LOCAL}, and {@code FI_MR_HMEM}, whose device memory
     * goes through {@code fi_mr_regattr} with its {@code iface}), remote addresses are virtual or offsets as the
     * provider says ({@code FI_MR_VIRT_ADDR}), keys are the provider's or requested ({@code FI_MR_PROV_KEY}), and only
     * allocated memory is registered ({@code FI_MR_ALLOCATED}).
     */
    public static final int SUPPORTED_MR_MODE =
            FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_HMEM;
    /** FI_MSG | FI_RMA with both initiator (FI_READ, FI_WRITE, FI_SEND, FI_RECV) and target (FI_REMOTE_*) roles. */
    public static final long DEFAULT_CAPS =
            FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE;

    private final boolean none;
    private String provider;
    private String fabricName;
    private String domainName;
    private int epType = FI_EP_RDM;
    private long caps = DEFAULT_CAPS;
    private int mrMode = SUPPORTED_MR_MODE;
    private int version;
    private String node;
    private String service;
    private boolean source;

    private Hints(boolean none) {
        this.none = none;
    }

    /** Reliable-datagram endpoints with FI_MSG | FI_RMA, any provider. */
    public static Hints rdm() {
        return new Hints(false);
    }

    /**
     * No hints at all (a NULL hints pointer): every provider, endpoint type and capability, as {@code fi_info -l}
     * shows.
     */
    public static Hints none() {
        return new Hints(true);
    }

    /** Only this provider, e.g. {@code shm}, {@code tcp} (matches {@code tcp;ofi_rxm}), {@code efa}, {@code verbs}. */
    public Hints provider(String name) {
        requireHints();
        this.provider = name;
        return this;
    }

    /** Only this fabric, e.g. {@code 127.0.0.1/32} or {@code efa}. */
    public Hints fabricName(String name) {
        requireHints();
        this.fabricName = name;
        return this;
    }

    /** Only this domain, e.g. {@code lo} for tcp over loopback, or a NIC such as {@code mlx5_0}. */
    public Hints domainName(String name) {
        requireHints();
        this.domainName = name;
        return this;
    }

    /** Endpoint type, {@code FI_EP_RDM} by default. */
    public Hints endpointType(int type) {
        requireHints();
        this.epType = type;
        return this;
    }

    /** Capabilities, {@link #DEFAULT_CAPS} by default. */
    public Hints caps(long caps) {
        requireHints();
        this.caps = caps;
        return this;
    }

    /** The mr_mode bits offered to providers; only bits in {@link #SUPPORTED_MR_MODE} are accepted. */
    public Hints mrMode(int mrMode) {
        requireHints();
        String problem = unhonouredMrMode(mrMode);
        if (problem != null) {
            throw new IllegalArgumentException(
                    "mr_mode " + Info.mrModeToString(mrMode) + " cannot be offered: " + problem);
        }
        this.mrMode = mrMode;
        return this;
    }

    /**
     * Why this binding cannot work with {@code mrMode}, naming each bit it does not implement and what that bit would
     * need; null when every bit is honoured.
     */
    static String unhonouredMrMode(int mrMode) {
        int missing = mrMode & ~SUPPORTED_MR_MODE;
        if (missing == 0) {
            return null;
        }
        StringBuilder sb = new StringBuilder("this binding does not implement ")
                .append(Info.mrModeToString(missing))
                .append(" (");
        String sep = "";
        for (int bit = 1; bit != 0; bit <<= 1) {
            if ((missing & bit) != 0) {
                sb.append(sep).append(Info.mrModeToString(bit)).append(": ").append(needs(bit));
                sep = "; ";
            }
        }
        return sb.append("). It honours ")
                .append(Info.mrModeToString(SUPPORTED_MR_MODE))
                .append(": offer a subset of those, or use a provider that needs no more")
                .toString();
    }

    private static String needs(int bit) {
        return switch (bit) {
            case FI_MR_BASIC, FI_MR_SCALABLE ->
                "a pre-1.5 mode; this binding asks for API 1.5 or newer and its explicit bits";
            case FI_MR_RAW -> "raw keys larger than 64 bits exchanged with fi_mr_raw_attr and fi_mr_map_raw";
            case FI_MR_MMU_NOTIFY -> "fi_mr_refresh after the pages under a region change";
            case FI_MR_RMA_EVENT -> "fi_mr_bind to a counter and fi_mr_enable before use";
            case FI_MR_ENDPOINT ->
                "each region bound to one endpoint with fi_mr_bind and fi_mr_enable, while"
                        + " regions here belong to the domain and serve all its endpoints";
            case FI_MR_COLLECTIVE -> "collective operations, which this binding does not offer";
            default -> "an mr_mode bit unknown to this binding";
        };
    }

    /**
     * API version to request, {@code FI_VERSION(major, minor)}; by default 1.17 or the runtime's, whichever is lower.
     */
    public Hints version(int version) {
        this.version = version;
        return this;
    }

    /**
     * Local source address for the endpoints (fi_getinfo's node with FI_SOURCE), e.g. {@code 127.0.0.1} for tcp on
     * loopback.
     */
    public Hints sourceAddress(String node) {
        this.node = node;
        this.service = null;
        this.source = true;
        return this;
    }

    String node() {
        return node;
    }

    String service() {
        return service;
    }

    boolean source() {
        return source;
    }

    int version() {
        return version;
    }

    private void requireHints() {
        if (none) {
            throw new IllegalStateException(
                    "Hints.none() asks for everything; start from Hints.rdm() to restrict the query");
        }
    }

    /**
     * Lays the hints out as a {@code struct fi_info} and its attribute structs in {@code arena}; NULL for
     * {@link #none()}.
     */
    MemorySegment toNative(Arena arena) {
        if (none) {
            return MemorySegment.NULL;
        }
        MemorySegment info = arena.allocate(FabricH.FI_INFO);
        MemorySegment tx = arena.allocate(FabricH.FI_TX_ATTR);
        MemorySegment rx = arena.allocate(FabricH.FI_RX_ATTR);
        MemorySegment ep = arena.allocate(FabricH.FI_EP_ATTR);
        MemorySegment dom = arena.allocate(FabricH.FI_DOMAIN_ATTR);
        MemorySegment fab = arena.allocate(FabricH.FI_FABRIC_ATTR);
        info.set(ValueLayout.JAVA_LONG, INFO_CAPS, caps);
        // the application side of FI_CONTEXT/FI_CONTEXT2 is implemented (Endpoint gives such providers context memory)
        info.set(ValueLayout.JAVA_LONG, INFO_MODE, FI_CONTEXT | FI_CONTEXT2);
        info.set(ValueLayout.ADDRESS, INFO_TX_ATTR, tx);
        info.set(ValueLayout.ADDRESS, INFO_RX_ATTR, rx);
        info.set(ValueLayout.ADDRESS, INFO_EP_ATTR, ep);
        info.set(ValueLayout.ADDRESS, INFO_DOMAIN_ATTR, dom);
        info.set(ValueLayout.ADDRESS, INFO_FABRIC_ATTR, fab);
        ep.set(ValueLayout.JAVA_INT, EP_TYPE, epType);
        dom.set(ValueLayout.JAVA_INT, DOMAIN_MR_MODE, mrMode);
        if (domainName != null) {
            dom.set(ValueLayout.ADDRESS, DOMAIN_NAME, arena.allocateFrom(domainName));
        }
        if (provider != null) {
            fab.set(ValueLayout.ADDRESS, FABRIC_PROV_NAME, arena.allocateFrom(provider));
        }
        if (fabricName != null) {
            fab.set(ValueLayout.ADDRESS, FABRIC_NAME, arena.allocateFrom(fabricName));
        }
        return info;
    }

    @Override
    public String toString() {
        if (none) {
            return "no hints";
        }
        return "provider=" + (provider == null ? "any" : provider)
                + (fabricName == null ? "" : ", fabric=" + fabricName)
                + (domainName == null ? "" : ", domain=" + domainName) + ", ep_type=" + epType + ", caps=0x"
                + Long.toHexString(caps)
                + ", mr_mode=0x" + Integer.toHexString(mrMode) + (node == null ? "" : ", source=" + node);
    }
}
