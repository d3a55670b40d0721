/**
 * Raw FFM bindings of libibverbs and librdmacm: struct layouts checked against rdma-core's headers, constants, lazily
 * bound functions, and the ops-table handles behind the {@code static inline} data path.
 */
package io.rdma4j.ibverbs.ffi;
