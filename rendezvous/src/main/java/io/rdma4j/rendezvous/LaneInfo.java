package io.rdma4j.rendezvous;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One lane of a peer as others see it: which backend and NIC, and the backend's endpoint bytes.
 *
 * @param index the lane number within the peer (what {@link LaneKey#lane()} refers to), >= 0
 * @param backendId the backend's own identifier ({@code ibverbs}, {@code libfabric}, {@code noop}...), as its provider
 *     names it: {@value #BACKEND_ID_PATTERN}; lanes connect only to lanes of the same id
 * @param provider the libfabric provider ({@code "tcp;ofi_rxm"}), empty for ibverbs
 * @param device the device name ({@code mlx5_0}, {@code lo})
 * @param pciAddress the NIC's PCI address {@code dddd:bb:dd.f}, or {@code null} when not a PCI NIC
 * @param numaNode the NIC's NUMA node, -1 when unknown
 * @param endpoint the backend's opaque endpoint information (ibverbs: {@link QpInfo#encode()})
 */
public record LaneInfo(
        int index, String backendId, String provider, String device, String pciAddress, int numaNode, byte[] endpoint) {
    /** What a backend id may look like (the directory rejects others). */
    public static final String BACKEND_ID_PATTERN = "[a-z0-9][a-z0-9._-]{0,31}";

    private static final Pattern BACKEND_ID = Pattern.compile(BACKEND_ID_PATTERN);

    public LaneInfo {
        if (index < 0) {
            throw new IllegalArgumentException("lane index must be >= 0, got " + index);
        }
        Objects.requireNonNull(backendId, "backendId");
        if (!isValidBackendId(backendId)) {
            throw new IllegalArgumentException(
                    "lane " + index + ": backend id '" + backendId + "' does not match " + BACKEND_ID_PATTERN);
        }
        provider = provider == null ? "" : provider;
        device = device == null ? "" : device;
        if (numaNode < -1) {
            throw new IllegalArgumentException(
                    "lane " + index + ": numaNode must be >= -1 (-1: unknown), got " + numaNode);
        }
        Objects.requireNonNull(endpoint, "endpoint");
        endpoint = endpoint.clone();
    }

    /**
     * A lane of one of the two backends the {@link Backend} enum names.
     *
     * @param backend IBVERBS or LIBFABRIC (OTHER has no id: use the canonical constructor with the backend's id)
     */
    public LaneInfo(
            int index,
            Backend backend,
            String provider,
            String device,
            String pciAddress,
            int numaNode,
            byte[] endpoint) {
        this(index, idOf(backend), provider, device, pciAddress, numaNode, endpoint);
    }

    private static String idOf(Backend backend) {
        String id = Objects.requireNonNull(backend, "backend").id();
        if (id == null) {
            throw new IllegalArgumentException("Backend.OTHER names no backend: pass the backend's id instead");
        }
        return id;
    }

    /** @return whether {@code id} is a well-formed backend id ({@value #BACKEND_ID_PATTERN}) */
    public static boolean isValidBackendId(String id) {
        return id != null && BACKEND_ID.matcher(id).matches();
    }

    /** An ibverbs lane carrying {@code qp}. */
    public static LaneInfo ibverbs(int index, String device, String pciAddress, int numaNode, QpInfo qp) {
        return new LaneInfo(index, Backend.IBVERBS, "", device, pciAddress, numaNode, qp.encode());
    }

    /** A libfabric lane carrying the {@code fi_getname} address {@code endpointName}. */
    public static LaneInfo libfabric(
            int index, String provider, String device, String pciAddress, int numaNode, byte[] endpointName) {
        return new LaneInfo(index, Backend.LIBFABRIC, provider, device, pciAddress, numaNode, endpointName);
    }

    /** @return the backend as the deprecated wire enum names it: IBVERBS, LIBFABRIC, or OTHER for any other id */
    public Backend backend() {
        return Backend.forId(backendId);
    }

    @Override
    public byte[] endpoint() {
        return endpoint.clone();
    }

    /**
     * @return the endpoint decoded as ibverbs QPInfo; {@link IllegalArgumentException} if it is not 28 bytes or not
     *     ibverbs
     */
    public QpInfo qpInfo() {
        if (backend() != Backend.IBVERBS) {
            throw new IllegalArgumentException(
                    "lane " + index + " is a " + backendId + " lane; only ibverbs lanes carry QpInfo");
        }
        return QpInfo.decode(endpoint);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LaneInfo l
                && l.index == index
                && l.backendId.equals(backendId)
                && l.provider.equals(provider)
                && l.device.equals(device)
                && Objects.equals(l.pciAddress, pciAddress)
                && l.numaNode == numaNode
                && Arrays.equals(l.endpoint, endpoint);
    }

    @Override
    public int hashCode() {
        return Objects.hash(index, backendId, device) * 31 + Arrays.hashCode(endpoint);
    }

    @Override
    public String toString() {
        return "LaneInfo[" + index + " " + backendId + (provider.isEmpty() ? "" : " " + provider) + " " + device
                + (pciAddress == null ? "" : " " + pciAddress) + " numa=" + numaNode + " endpoint="
                + HexFormat.of().formatHex(endpoint) + "]";
    }
}
