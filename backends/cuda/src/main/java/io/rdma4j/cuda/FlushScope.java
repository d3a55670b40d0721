package io.rdma4j.cuda;

import io.rdma4j.cuda.ffi.CudaDriver;

/**
 * {@code CUflushGPUDirectRDMAWritesScope}: whose view of inbound NIC writes
 * {@link CudaContext#flushGpuDirectRdmaWrites} settles.
 */
public enum FlushScope {
    /** {@code CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER}: visible to the context that owns the memory. */
    TO_OWNER(CudaDriver.CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER),
    /** {@code CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES}: visible to every device's contexts. */
    TO_ALL_DEVICES(CudaDriver.CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES);

    private final int value;

    FlushScope(int value) {
        this.value = value;
    }

    /** @return the C enum value */
    public int value() {
        return value;
    }
}
