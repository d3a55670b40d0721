package io.rdma4j.engine;

/**
 * Counters of one local lane.
 *
 * @param lane lane index
 * @param device backend device name
 * @param pciAddress NIC PCI address or {@code null}
 * @param numaNode NUMA node, -1 unknown
 * @param bytes bytes completed on it
 * @param chunks chunks completed on it
 * @param errors failed operations
 * @param lastError the last error text, or {@code null}
 * @param paused whether it is cooling down or out of service now
 */
public record LaneStats(
        int lane,
        String device,
        String pciAddress,
        int numaNode,
        long bytes,
        long chunks,
        long errors,
        String lastError,
        boolean paused) {}
