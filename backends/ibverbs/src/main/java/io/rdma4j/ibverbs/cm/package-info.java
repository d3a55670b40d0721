/**
 * RDMA-CM (librdmacm): event channels and CM ids that resolve IP addresses and routes, create queue pairs, and connect,
 * listen, accept and disconnect with private data.
 */
package io.rdma4j.ibverbs.cm;
