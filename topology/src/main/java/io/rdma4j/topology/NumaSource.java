package io.rdma4j.topology;

/** Where a device's NUMA node came from. */
public enum NumaSource {
    /** The device's {@code numa_node} attribute. */
    NUMA_NODE,
    /** {@code numa_node} was -1; the node whose CPUs contain the device's {@code local_cpulist}. */
    LOCAL_CPULIST,
    /** The machine has a single NUMA node. */
    SINGLE_NODE,
    /** A vendor topology file ({@code <cpu numaid>} or hwloc's nodeset). */
    TOPOLOGY_FILE,
    /** Not known: the device is treated as remote from every node. */
    UNKNOWN
}
