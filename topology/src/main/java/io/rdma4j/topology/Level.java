package io.rdma4j.topology;

/** How far apart two devices are, best first, in NCCL's names. */
public enum Level {
    /** Same PCIe switch port: both hang off the same bridge. */
    PIX,
    /** Share a PCIe switch (some bridge below the host bridge), through more than one bridge. */
    PXB,
    /** Same PCIe host bridge (root complex), no common switch. */
    PHB,
    /** Same NUMA node, different host bridges. */
    NODE,
    /** Different NUMA nodes (or locality unknown): traffic crosses the socket interconnect. */
    SYS
}
