/**
 * NVMe-oF as a block store of the transfer engine: {@code engine.openVolume(...)} stripes over namespaces reached
 * through {@link io.rdma4j.nvmeof.Controller}s; found by {@link java.util.ServiceLoader}.
 */
package io.rdma4j.nvmeof.engine;
