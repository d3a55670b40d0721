package io.rdma4j.cuda;

import io.rdma4j.Closeables;
import io.rdma4j.ClosedException;
import io.rdma4j.cuda.ffi.CudaDriver;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A retained primary context of one GPU, and the buffers allocated or adopted through it. CUDA contexts are current per
 * thread, so every call here first makes this context current on the calling thread ({@code cuCtxSetCurrent}, a cheap
 * call). {@link #close()} closes the buffers first (freeing those it allocated), then releases the context.
 */
public final class CudaContext implements AutoCloseable {
    /**
     * Owned allocations are rounded up to this size: 2 MiB is the GPU's large page, and allocations of whole large
     * pages start on one in practice, so a buffer's dma-buf export (host-page aligned) stays inside its allocation.
     * {@link GpuBuffer#exportDmaBuf()} checks that before calling the driver.
     */
    public static final long ALLOCATION_GRANULE = 2L << 20;

    private final CudaDevice device;
    private final MemorySegment context;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<GpuBuffer> buffers = ConcurrentHashMap.newKeySet();

    private CudaContext(CudaDevice device, MemorySegment context) {
        this.device = device;
        this.context = context;
    }

    static CudaContext retain(CudaDevice device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(CudaDriver.CUcontext);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuDevicePrimaryCtxRetain, out, device.handle()),
                    "cuDevicePrimaryCtxRetain",
                    "dev=" + device.handle());
            return new CudaContext(device, out.get(CudaDriver.CUcontext, 0));
        }
    }

    public CudaDevice device() {
        return device;
    }

    /** @return the {@code CUcontext} handle */
    public MemorySegment handle() {
        return context;
    }

    /** Makes this context current on the calling thread ({@code cuCtxSetCurrent}). */
    public void makeCurrent() {
        if (closed.get()) {
            throw new ClosedException("CUDA context of " + device);
        }
        CudaException.check(CudaDriver.call(CudaDriver.cuCtxSetCurrent, context), "cuCtxSetCurrent", "ctx=" + context);
    }

    /**
     * Allocates device memory ({@code cuMemAlloc}), rounded up to {@link #ALLOCATION_GRANULE}, with
     * {@code CU_POINTER_ATTRIBUTE_SYNC_MEMOPS} set so synchronous copies are complete when they return, as GPUDirect
     * RDMA requires. The buffer frees it on close.
     *
     * @param length bytes, at least 1
     */
    public GpuBuffer allocate(long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("GPU buffer length must be positive, got " + length);
        }
        if (length > Long.MAX_VALUE - ALLOCATION_GRANULE) {
            throw new IllegalArgumentException("GPU buffer length " + length + " is too large");
        }
        long size = (length + ALLOCATION_GRANULE - 1) & -ALLOCATION_GRANULE;
        makeCurrent();
        long address;
        long bufferId;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(CudaDriver.CUdeviceptr);
            CudaException.check(CudaDriver.call(CudaDriver.cuMemAlloc, out, size), "cuMemAlloc_v2", "bytesize=" + size);
            address = out.get(CudaDriver.CUdeviceptr, 0);
            try {
                MemorySegment one = arena.allocate(ValueLayout.JAVA_INT);
                one.set(ValueLayout.JAVA_INT, 0, 1);
                CudaException.check(
                        CudaDriver.call(
                                CudaDriver.cuPointerSetAttribute,
                                one,
                                CudaDriver.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
                                address),
                        "cuPointerSetAttribute",
                        "CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, ptr=0x" + Long.toHexString(address));
                MemorySegment id = arena.allocate(ValueLayout.JAVA_LONG);
                CudaException.check(
                        CudaDriver.call(
                                CudaDriver.cuPointerGetAttribute,
                                id,
                                CudaDriver.CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                address),
                        "cuPointerGetAttribute",
                        "CU_POINTER_ATTRIBUTE_BUFFER_ID, ptr=0x" + Long.toHexString(address));
                bufferId = id.get(ValueLayout.JAVA_LONG, 0);
            } catch (RuntimeException e) {
                int rc = CudaDriver.call(CudaDriver.cuMemFree, address);
                if (rc != 0) {
                    e.addSuppressed(CudaException.of(rc, "cuMemFree_v2", "dptr=0x" + Long.toHexString(address)));
                }
                throw e;
            }
        }
        return track(new GpuBuffer(this, address, length, address, size, bufferId, true));
    }

    /**
     * Adopts device memory some other library allocated (a framework's tensor): finds its allocation with
     * {@code cuMemGetAddressRange} and its identity with {@code cuPointerGetAttributes}. The buffer never frees it.
     *
     * @param address a device pointer of this context's GPU
     * @param length bytes from {@code address}, which must stay inside the allocation
     */
    public GpuBuffer adopt(long address, long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("adopted GPU buffer length must be positive, got " + length);
        }
        makeCurrent();
        String ptr = "ptr=0x" + Long.toHexString(address);
        try (Arena arena = Arena.ofConfined()) {
            int[] attributes = {
                CudaDriver.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                CudaDriver.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                CudaDriver.CU_POINTER_ATTRIBUTE_BUFFER_ID
            };
            MemorySegment attrs = arena.allocateFrom(ValueLayout.JAVA_INT, attributes);
            MemorySegment memoryType = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment ordinal = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment bufferId = arena.allocate(ValueLayout.JAVA_LONG);
            MemorySegment data = arena.allocate(ValueLayout.ADDRESS, attributes.length);
            data.setAtIndex(ValueLayout.ADDRESS, 0, memoryType);
            data.setAtIndex(ValueLayout.ADDRESS, 1, ordinal);
            data.setAtIndex(ValueLayout.ADDRESS, 2, bufferId);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuPointerGetAttributes, attributes.length, attrs, data, address),
                    "cuPointerGetAttributes",
                    "MEMORY_TYPE|DEVICE_ORDINAL|BUFFER_ID, " + ptr);
            int type = memoryType.get(ValueLayout.JAVA_INT, 0);
            if (type != CudaDriver.CU_MEMORYTYPE_DEVICE) {
                throw new IllegalArgumentException(
                        "0x" + Long.toHexString(address) + " is not CUDA device memory (CUmemorytype " + type
                                + (type == 0 ? ", unknown to CUDA: a host pointer?" : "")
                                + "): register host memory as a host segment instead");
            }
            int owner = ordinal.get(ValueLayout.JAVA_INT, 0);
            if (owner != device.ordinal()) {
                throw new IllegalArgumentException("0x" + Long.toHexString(address) + " lives on GPU " + owner
                        + ", not on " + device + ": adopt it through GPU " + owner + "'s context");
            }
            MemorySegment base = arena.allocate(CudaDriver.CUdeviceptr);
            MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuMemGetAddressRange, base, size, address),
                    "cuMemGetAddressRange_v2",
                    ptr);
            long b = base.get(CudaDriver.CUdeviceptr, 0);
            long s = size.get(ValueLayout.JAVA_LONG, 0);
            if (Long.compareUnsigned(address - b, s) > 0 || length > s - (address - b)) {
                throw new IndexOutOfBoundsException(
                        "adopting [0x" + Long.toHexString(address) + ", +" + length + ") leaves its allocation [0x"
                                + Long.toHexString(b) + ", +" + s + "): pass a length that ends inside it");
            }
            return track(new GpuBuffer(this, address, length, b, s, bufferId.get(ValueLayout.JAVA_LONG, 0), false));
        }
    }

    /** Waits for all work on this context ({@code cuCtxSynchronize}). */
    public void synchronize() {
        makeCurrent();
        CudaException.check(CudaDriver.call(CudaDriver.cuCtxSynchronize), "cuCtxSynchronize", "");
    }

    /**
     * Waits for one stream ({@code cuStreamSynchronize}): call it on the stream that produced GPU data before a NIC
     * reads it.
     *
     * @param stream a {@code CUstream} handle from the producing library (0 is the legacy default stream)
     */
    public void synchronizeStream(long stream) {
        makeCurrent();
        CudaException.check(
                CudaDriver.call(CudaDriver.cuStreamSynchronize, MemorySegment.ofAddress(stream)),
                "cuStreamSynchronize",
                "hStream=0x" + Long.toHexString(stream));
    }

    /**
     * Makes inbound GPUDirect RDMA writes visible before CUDA reads them ({@code cuFlushGPUDirectRDMAWrites} with
     * target {@code CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX}): call it after a transfer into this GPU
     * completes.
     */
    public void flushGpuDirectRdmaWrites(FlushScope scope) {
        makeCurrent();
        CudaException.check(
                CudaDriver.call(
                        CudaDriver.cuFlushGPUDirectRDMAWrites,
                        CudaDriver.CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                        scope.value()),
                "cuFlushGPUDirectRDMAWrites",
                "CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX, " + scope);
    }

    private GpuBuffer track(GpuBuffer buffer) {
        buffers.add(buffer);
        return buffer;
    }

    void untrack(GpuBuffer buffer) {
        buffers.remove(buffer);
    }

    boolean isClosed() {
        return closed.get();
    }

    /** Closes every buffer of this context, then releases the primary context. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<AutoCloseable> steps = new ArrayList<>();
        // buffers free through this context: it must still be current while they close
        steps.add(() -> CudaException.check(
                CudaDriver.call(CudaDriver.cuCtxSetCurrent, context), "cuCtxSetCurrent", "ctx=" + context));
        steps.addAll(List.copyOf(buffers));
        steps.add(() -> CudaException.check(
                CudaDriver.call(CudaDriver.cuDevicePrimaryCtxRelease, device.handle()),
                "cuDevicePrimaryCtxRelease_v2",
                "dev=" + device.handle()));
        Closeables.closeAll(steps);
    }

    @Override
    public String toString() {
        return "CudaContext[" + device + (closed.get() ? ", closed]" : "]");
    }
}
