/**
 * Not API: NVMe submission and completion entry encoding, Fabrics and admin command builders, data structure parsers.
 */
package io.rdma4j.nvmeof.internal;
