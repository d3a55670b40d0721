/**
 * The libfabric backend of the transfer engine ({@link io.rdma4j.engine.spi}): each lane is an RDM endpoint on its own
 * domain; found through {@link java.util.ServiceLoader}.
 */
package io.rdma4j.libfabric.engine;
