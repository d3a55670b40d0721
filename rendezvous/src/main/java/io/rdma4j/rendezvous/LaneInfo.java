package io.rdma4j.rendezvous;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * One lane of a peer as others see it: which backend and NIC, and the backend's endpoint bytes.
 *
 * @param index      the lane number within the peer (what {@link LaneKey#lane()} refers to), >= 0
 * @param backend    the transport
 * @param provider   the libfabric provider ({@code "tcp;ofi_rxm"}), empty for ibverbs
 * @param device     the device name ({@code mlx5_0}, {@code lo})
 * @param pciAddress the NIC's PCI address {@code dddd:bb:dd.f}, or {@code null} when not a PCI NIC
 * @param numaNode   the NIC's NUMA node, -1 when unknown
 * @param endpoint   the backend's opaque endpoint information (ibverbs: {@link QpInfo#encode()})
 */
public record LaneInfo(int index, Backend backend, String provider, String device, String pciAddress, int numaNode, byte[] endpoint) {
    public LaneInfo {
        if (index < 0) {
            throw new IllegalArgumentException("lane index must be >= 0, got " + index);
        }
        Objects.requireNonNull(backend, "backend");
        provider = provider == null ? "" : provider;
        device = device == null ? "" : device;
        if (numaNode < -1) {
            throw new IllegalArgumentException("lane " + index + ": numaNode must be >= -1 (-1: unknown), got " + numaNode);
        }
        Objects.requireNonNull(endpoint, "endpoint");
        endpoint = endpoint.clone();
    }

    /** An ibverbs lane carrying {@code qp}. */
    public static LaneInfo ibverbs(int index, String device, String pciAddress, int numaNode, QpInfo qp) {
        return new LaneInfo(index, Backend.IBVERBS, "", device, pciAddress, numaNode, qp.encode());
    }

    /** A libfabric lane carrying the {@code fi_getname} address {@code endpointName}. */
    public static LaneInfo libfabric(int index, String provider, String device, String pciAddress, int numaNode, byte[] endpointName) {
        return new LaneInfo(index, Backend.LIBFABRIC, provider, device, pciAddress, numaNode, endpointName);
    }

    @Override
    public byte[] endpoint() {
        return endpoint.clone();
    }

    /** @return the endpoint decoded as ibverbs QPInfo; {@link IllegalArgumentException} if it is not 28 bytes or not ibverbs */
    public QpInfo qpInfo() {
        if (backend != Backend.IBVERBS) {
            throw new IllegalArgumentException("lane " + index + " is a " + backend + " lane; only IBVERBS lanes carry QpInfo");
        }
        return QpInfo.decode(endpoint);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LaneInfo l && l.index == index && l.backend == backend && l.provider.equals(provider) && l.device.equals(device)
                && Objects.equals(l.pciAddress, pciAddress) && l.numaNode == numaNode && Arrays.equals(l.endpoint, endpoint);
    }

    @Override
    public int hashCode() {
        return Objects.hash(index, backend, device) * 31 + Arrays.hashCode(endpoint);
    }

    @Override
    public String toString() {
        return "LaneInfo[" + index + " " + backend + (provider.isEmpty() ? "" : " " + provider) + " " + device
                + (pciAddress == null ? "" : " " + pciAddress) + " numa=" + numaNode + " endpoint=" + HexFormat.of().formatHex(endpoint) + "]";
    }
}
