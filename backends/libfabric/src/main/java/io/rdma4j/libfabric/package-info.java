/**
 * libfabric raw layer: owned, closeable Java objects over fi_getinfo, fabric, domain, address vector, RDM endpoint,
 * completion queue and memory region. Control calls throw; data-path calls return libfabric status codes.
 */
package io.rdma4j.libfabric;
