/**
 * The engine's backend SPI: what a transport (libfabric, ibverbs) implements so the transfer engine can drive it.
 * Transport-neutral: lanes, opaque endpoint bytes, per-lane keys, primitive posting and reusable completion batches.
 * Block storage (remote NVMe namespaces the engine stripes over) comes in through
 * {@link io.rdma4j.engine.spi.BlockStoreProvider}.
 */
package io.rdma4j.engine.spi;
