package io.rdma4j.engine.internal;

import io.rdma4j.engine.MemoryLocation;

/**
 * How far a NIC is from memory on this machine: topology ranking when the NIC is a known PCI device, NUMA otherwise.
 */
interface LaneLevels {
    /**
     * @param pciAddress the lane's NIC, or null when the lane is not a PCI NIC
     * @param numaNode the lane's NUMA node, -1 unknown
     */
    Level level(String pciAddress, int numaNode, MemoryLocation memory);

    /** @return one sentence on where levels came from (topology source, or why only NUMA was used) */
    String source();

    /** NUMA distance only: the same node (or an unknown one) is NODE, another is SYS. */
    static Level byNuma(int laneNode, int memoryNode) {
        return laneNode < 0 || memoryNode < 0 || laneNode == memoryNode ? Level.NODE : Level.SYS;
    }
}
