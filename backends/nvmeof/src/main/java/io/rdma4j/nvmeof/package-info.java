/**
 * NVMe over Fabrics host (initiator): {@link io.rdma4j.nvmeof.Controller} connects to a remote subsystem, discovers,
 * identifies and does asynchronous block I/O on its namespaces.
 */
package io.rdma4j.nvmeof;
