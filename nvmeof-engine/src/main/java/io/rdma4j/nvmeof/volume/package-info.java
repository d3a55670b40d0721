/**
 * Where the transfer engine and NVMe-oF meet: checkpoints ({@link io.rdma4j.nvmeof.Checkpoint}) on an engine volume. A
 * module of its own so that the nvmeof backend, which the engine finds by ServiceLoader, never depends on the engine.
 */
package io.rdma4j.nvmeof.volume;
