/**
 * Raw libfabric bindings: struct layouts (one class per C header, C declarations quoted), constants, and the downcall
 * handles for exported functions and for the {@code static inline} calls that go through ops tables.
 */
package io.rdma4j.libfabric.ffi;
