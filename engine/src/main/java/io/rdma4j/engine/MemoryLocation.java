package io.rdma4j.engine;

import io.rdma4j.InvalidArgumentException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Where a buffer's bytes live, for lane ranking: host memory on a NUMA node (or unknown), or a GPU by PCI address.
 *
 * @param numaNode NUMA node of the memory (or of the GPU), -1 when unknown
 * @param gpuAddress PCI address {@code dddd:bb:dd.f} of the GPU holding it, {@code null} for host memory
 */
public record MemoryLocation(int numaNode, String gpuAddress) {
    private static final Pattern BDF = Pattern.compile("[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");

    /** Host memory whose NUMA node is not known: every NUMA-local lane ranks the same. */
    public static final MemoryLocation HOST = new MemoryLocation(-1, null);

    /**
     * Checks the node and normalises the PCI address to lower case.
     *
     * @throws io.rdma4j.InvalidArgumentException when {@code numaNode} is below -1 or {@code gpuAddress} is not a PCI
     *     address
     */
    public MemoryLocation {
        if (numaNode < -1) {
            throw new InvalidArgumentException("numaNode must be -1 (unknown) or >= 0, got " + numaNode);
        }
        if (gpuAddress != null) {
            gpuAddress = gpuAddress.toLowerCase(Locale.ROOT);
            if (!BDF.matcher(gpuAddress).matches()) {
                throw new InvalidArgumentException("gpuAddress must look like 0000:1b:00.0, got '" + gpuAddress + "'");
            }
        }
    }

    /**
     * {@return host memory on {@code node}}
     *
     * @param node the NUMA node, 0 or more
     * @throws io.rdma4j.InvalidArgumentException when {@code node} is negative
     */
    public static MemoryLocation numa(int node) {
        return new MemoryLocation(node, null);
    }

    /**
     * {@return memory of the GPU at PCI address {@code bdf} (NUMA node unknown)}
     *
     * @param bdf the GPU's PCI address, {@code dddd:bb:dd.f}
     * @throws io.rdma4j.InvalidArgumentException when {@code bdf} is not a PCI address
     */
    public static MemoryLocation gpu(String bdf) {
        return new MemoryLocation(-1, bdf);
    }

    @Override
    public String toString() {
        return gpuAddress != null ? "gpu " + gpuAddress : numaNode >= 0 ? "numa:" + numaNode : "host memory";
    }
}
