package io.rdma4j.rendezvous;

/**
 * Where a buffer's memory sits.
 *
 * @param numaNode NUMA node of the memory (or of its GPU), -1 when unknown
 * @param deviceOrdinal CUDA device ordinal for {@link MemoryKind#CUDA}, -1 otherwise
 * @param pciAddress PCI address of the GPU, or {@code null}
 */
public record Locality(int numaNode, int deviceOrdinal, String pciAddress) {
    /** Host memory on an unknown NUMA node. */
    public static final Locality UNKNOWN = new Locality(-1, -1, null);

    public Locality {
        if (numaNode < -1 || deviceOrdinal < -1) {
            throw new IllegalArgumentException("numaNode and deviceOrdinal must be >= -1 (-1: unknown/none), got "
                    + numaNode + ", " + deviceOrdinal);
        }
    }

    public static Locality host(int numaNode) {
        return new Locality(numaNode, -1, null);
    }

    public static Locality cuda(int deviceOrdinal, String pciAddress, int numaNode) {
        return new Locality(numaNode, deviceOrdinal, pciAddress);
    }
}
