/**
 * The transfer engine's public API: {@link io.rdma4j.engine.TransferEngine} moves bytes one-sided between registered
 * buffers of peers, striped across topology-ranked lanes, with notifications, deadlines and failover.
 */
package io.rdma4j.engine;
