/**
 * NVMe/RDMA (NVMe over Fabrics RDMA transport binding) over RDMA-CM and ibverbs: the connection private data, and the
 * queue that sends 64-byte command capsules, receives 16-byte completions and lets the target move data straight into
 * and out of registered memory through keyed SGL descriptors.
 */
package io.rdma4j.nvmeof.rdma;
