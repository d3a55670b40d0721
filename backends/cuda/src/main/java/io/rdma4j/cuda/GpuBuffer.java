package io.rdma4j.cuda;

import io.rdma4j.ClosedException;
import io.rdma4j.cuda.ffi.CudaDriver;
import io.rdma4j.cuda.ffi.Posix;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.ffi.Segments;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A range of GPU device memory: the device ordinal, the device address and length, and the GPU's PCI address (which the
 * planner uses to pick nearby NICs). Either owned ({@link CudaContext#allocate}, freed on close) or adopted from
 * another library ({@link CudaContext#adopt}, never freed here). Copies check their bounds in Java before calling the
 * driver. As {@link DeviceMemory} the transfer engine registers it directly or stages it through host memory; before a
 * NIC reads it the producing stream ({@link #producedOn}) or else the whole context is synchronized, and after a NIC
 * wrote it GPUDirect RDMA writes are flushed to the owning context.
 */
public final class GpuBuffer implements AutoCloseable, DeviceMemory {
    private final CudaContext context;
    private final long address;
    private final long length;
    private final long allocationBase;
    private final long allocationSize;
    private final long bufferId;
    private final boolean owned;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The CUstream whose work produces this memory, or -1: synchronize the whole context. */
    private volatile long producerStream = -1;

    GpuBuffer(
            CudaContext context,
            long address,
            long length,
            long allocationBase,
            long allocationSize,
            long bufferId,
            boolean owned) {
        this.context = context;
        this.address = address;
        this.length = length;
        this.allocationBase = allocationBase;
        this.allocationSize = allocationSize;
        this.bufferId = bufferId;
        this.owned = owned;
    }

    /** @return {@link DeviceMemory.Kind#CUDA} */
    @Override
    public Kind kind() {
        return Kind.CUDA;
    }

    /**
     * Names the stream whose kernels or copies write this memory, so {@link #beforeNicRead()} waits for that stream
     * only ({@code cuStreamSynchronize}) instead of the whole context ({@code cuCtxSynchronize}).
     *
     * @param stream a {@code CUstream} handle from the producing library (0 is the legacy default stream)
     * @return this buffer
     */
    public GpuBuffer producedOn(long stream) {
        this.producerStream = stream;
        return this;
    }

    /** Waits for the producing stream ({@link #producedOn}) or, when none was named, for the whole context. */
    @Override
    public void beforeNicRead() {
        requireOpen();
        long stream = producerStream;
        if (stream == -1) {
            context.synchronize();
        } else {
            context.synchronizeStream(stream);
        }
    }

    /**
     * Flushes inbound GPUDirect RDMA writes to the owning context ({@code cuFlushGPUDirectRDMAWrites}) where the device
     * offers the flush; a device without it (attribute {@code GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS} 0) has nothing to
     * flush.
     */
    @Override
    public void afterNicWrite() {
        requireOpen();
        if (context.device().flushGpuDirectRdmaWritesSupported()) {
            context.flushGpuDirectRdmaWrites(FlushScope.TO_OWNER);
        }
    }

    /** Copies {@code target.byteSize()} bytes at {@code offset} into {@code target} ({@code cuMemcpyDtoH}). */
    @Override
    public void copyToHost(long offset, MemorySegment target) {
        copyToHost(offset, target, 0, target.byteSize());
    }

    /** Copies all of {@code source} into this buffer at {@code offset} ({@code cuMemcpyHtoD}). */
    @Override
    public void copyFromHost(MemorySegment source, long offset) {
        copyFromHost(source, 0, offset, source.byteSize());
    }

    /** @return the GPU's ordinal among visible devices */
    @Override
    public int deviceOrdinal() {
        return context.device().ordinal();
    }

    /** @return the GPU's PCI address, {@code dddd:bb:dd.f} */
    @Override
    public String pciAddress() {
        return context.device().pciAddress();
    }

    /** @return the device address ({@code CUdeviceptr}) of the first byte */
    @Override
    public long address() {
        return address;
    }

    /** @return the length in bytes */
    @Override
    public long length() {
        return length;
    }

    /** @return the start of the CUDA allocation this buffer lies in ({@code cuMemGetAddressRange}) */
    public long allocationBase() {
        return allocationBase;
    }

    /** @return the size of the CUDA allocation this buffer lies in */
    public long allocationSize() {
        return allocationSize;
    }

    /** @return {@code CU_POINTER_ATTRIBUTE_BUFFER_ID}: unique per allocation over the process's life */
    public long bufferId() {
        return bufferId;
    }

    /** @return true if closing this buffer frees the memory */
    public boolean isOwned() {
        return owned;
    }

    public CudaContext context() {
        return context;
    }

    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Copies {@code length} bytes from host memory into this buffer at {@code offset} ({@code cuMemcpyHtoD},
     * synchronous).
     */
    public void copyFromHost(MemorySegment source, long sourceOffset, long offset, long length) {
        checkCopy(source, sourceOffset, offset, length, "source host segment");
        context.makeCurrent();
        int rc = CudaDriver.call(
                CudaDriver.cuMemcpyHtoD, address + offset, source.asSlice(sourceOffset, length), length);
        Reference.reachabilityFence(source);
        CudaException.check(
                rc, "cuMemcpyHtoD_v2", "dstDevice=0x" + Long.toHexString(address + offset) + ", ByteCount=" + length);
    }

    /** Copies all of {@code source} into the start of this buffer. */
    public void copyFromHost(MemorySegment source) {
        copyFromHost(source, 0, 0, source.byteSize());
    }

    /**
     * Copies {@code length} bytes at {@code offset} of this buffer into host memory ({@code cuMemcpyDtoH},
     * synchronous).
     */
    public void copyToHost(long offset, MemorySegment target, long targetOffset, long length) {
        checkCopy(target, targetOffset, offset, length, "target host segment");
        if (target.isReadOnly()) {
            throw new IllegalArgumentException("target host segment is read-only");
        }
        context.makeCurrent();
        int rc = CudaDriver.call(
                CudaDriver.cuMemcpyDtoH, target.asSlice(targetOffset, length), address + offset, length);
        Reference.reachabilityFence(target);
        CudaException.check(
                rc, "cuMemcpyDtoH_v2", "srcDevice=0x" + Long.toHexString(address + offset) + ", ByteCount=" + length);
    }

    /** Copies the start of this buffer into all of {@code target}. */
    public void copyToHost(MemorySegment target) {
        copyToHost(0, target, 0, target.byteSize());
    }

    private void checkCopy(MemorySegment host, long hostOffset, long offset, long length, String what) {
        requireOpen();
        Segments.requireNative(host, what);
        Segments.checkRange(host, hostOffset, length, what);
        Segments.checkRange(this.length, offset, length, "GPU buffer of " + this.length + " bytes");
    }

    /** The page-aligned range a dma-buf export of this buffer covers: {@code [base, base + length)}. */
    public record ExportRange(long base, long length, long offset) {}

    /**
     * The host-page-aligned range around this buffer that {@link #exportDmaBuf()} exports, checked to lie inside the
     * buffer's allocation.
     */
    public ExportRange exportRange() {
        return exportRange(address, length, allocationBase, allocationSize, Posix.pageSize());
    }

    static ExportRange exportRange(long address, long length, long allocationBase, long allocationSize, long pageSize) {
        long base = address & -pageSize;
        long end = (address + length + pageSize - 1) & -pageSize;
        if (Long.compareUnsigned(base, allocationBase) < 0
                || Long.compareUnsigned(end - allocationBase, allocationSize) > 0) {
            throw new IllegalStateException("the dma-buf export of [0x" + Long.toHexString(address) + ", +" + length
                    + ") must cover whole "
                    + pageSize + "-byte host pages, [0x" + Long.toHexString(base) + ", 0x" + Long.toHexString(end)
                    + "), which leaves its CUDA allocation [0x" + Long.toHexString(allocationBase) + ", +"
                    + allocationSize
                    + "): allocate with CudaContext.allocate (whole 2 MiB pages) or adopt a page-aligned allocation");
        }
        return new ExportRange(base, end - base, address - base);
    }

    /**
     * Exports the pages under this buffer as a dma-buf file descriptor ({@code cuMemGetHandleForAddressRange} with
     * {@code CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD}) for {@code ibv_reg_dmabuf_mr(pd, offset, length, iova = address,
     * fd)}. Start and length are page-aligned and checked against the allocation in Java first. Close the result to
     * close the fd.
     */
    @Override
    public DmaBuf exportDmaBuf() {
        requireOpen();
        ExportRange range = exportRange();
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fd = arena.allocate(ValueLayout.JAVA_INT);
            fd.set(ValueLayout.JAVA_INT, 0, -1);
            CudaException.check(
                    CudaDriver.call(
                            CudaDriver.cuMemGetHandleForAddressRange,
                            fd,
                            range.base(),
                            range.length(),
                            CudaDriver.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                            0L),
                    "cuMemGetHandleForAddressRange",
                    "dptr=0x" + Long.toHexString(range.base()) + ", size=" + range.length()
                            + ", CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags=0");
            return new DmaBuf(
                    fd.get(ValueLayout.JAVA_INT, 0), range.base(), range.length(), range.offset(), address, length);
        }
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new ClosedException(toString());
        }
    }

    /** Frees the memory if this buffer owns it ({@code cuMemFree}); an adopted buffer only forgets it. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        context.untrack(this);
        if (owned) {
            // not makeCurrent(): the context may be closing, and closes its buffers before releasing itself
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuCtxSetCurrent, context.handle()),
                    "cuCtxSetCurrent",
                    "ctx=" + context.handle());
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuMemFree, address),
                    "cuMemFree_v2",
                    "dptr=0x" + Long.toHexString(address));
        }
    }

    @Override
    public String toString() {
        return "GpuBuffer[" + (owned ? "owned" : "adopted") + ", GPU " + deviceOrdinal() + " " + pciAddress() + ", 0x"
                + Long.toHexString(address) + ", " + length + " bytes" + (closed.get() ? ", closed]" : "]");
    }
}
