/**
 * Raw FFM bindings to the CUDA driver API ({@code cuda.h}, {@code libcuda.so.1}): method handles, enum values and type
 * layouts, each checked against the installed header. Callers get {@code CUresult} codes back unchanged.
 */
package io.rdma4j.cuda.ffi;
