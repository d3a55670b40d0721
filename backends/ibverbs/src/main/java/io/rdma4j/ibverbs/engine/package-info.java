/**
 * The ibverbs engine backend: RC queue pairs per lane, several lanes per NIC, connected with QpInfo endpoint bytes,
 * selective signaling over a bounded send queue, and lane rebuild after a queue pair error.
 */
package io.rdma4j.ibverbs.engine;
