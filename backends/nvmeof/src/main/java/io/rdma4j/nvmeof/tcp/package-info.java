/**
 * NVMe/TCP (NVMe over Fabrics TCP transport binding): the PDU codec with digests and the TCP queue that carries command
 * capsules, completions and data for one NVMe queue pair.
 */
package io.rdma4j.nvmeof.tcp;
