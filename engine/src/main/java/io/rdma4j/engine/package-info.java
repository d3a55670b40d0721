/**
 * The transfer engine's public API: {@link io.rdma4j.engine.TransferEngine} moves bytes one-sided between registered
 * buffers of peers, striped across topology-ranked lanes, with notifications, deadlines and failover; and to and from
 * remote block storage ({@link io.rdma4j.engine.StorageVolume}: NVMe-oF namespaces striped RAID-0, reached through the
 * NIC nearest the memory).
 */
package io.rdma4j.engine;
