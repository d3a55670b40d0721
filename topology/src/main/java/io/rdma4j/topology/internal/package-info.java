/**
 * Parsers behind {@link io.rdma4j.topology.Topology}: the sysfs scanner, the NCCL and hwloc XML readers, the affinity
 * ranker and the JSON writer. Not API.
 */
package io.rdma4j.topology.internal;
