/**
 * Machine topology: which NICs and NVMe drives are closest to each GPU, accelerator and NUMA node, from sysfs, from
 * NCCL or hwloc topology files, or both. Start at {@link io.rdma4j.topology.Topology}.
 */
package io.rdma4j.topology;
