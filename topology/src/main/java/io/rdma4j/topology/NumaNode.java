package io.rdma4j.topology;

import java.util.List;

/**
 * One NUMA node.
 *
 * @param id node number
 * @param cpus its CPUs, ascending; empty for memory-only nodes (GPU memory on POWER9, CXL)
 * @param memoryBytes its memory, 0 when unknown
 * @param distances SLIT distances to node 0, 1, ... (as in {@code /sys/devices/system/node/nodeN/distance}); empty when
 *     unknown
 */
public record NumaNode(int id, List<Integer> cpus, long memoryBytes, List<Integer> distances) {
    public NumaNode {
        cpus = List.copyOf(cpus);
        distances = List.copyOf(distances);
    }

    /** @return false for a memory-only node, which is never chosen as a CPU home */
    public boolean hasCpus() {
        return !cpus.isEmpty();
    }

    /** @return the distance to another node, or -1 when unknown */
    public int distanceTo(int node) {
        return node >= 0 && node < distances.size() ? distances.get(node) : -1;
    }
}
