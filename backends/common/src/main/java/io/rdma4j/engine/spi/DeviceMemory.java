package io.rdma4j.engine.spi;

import java.lang.foreign.MemorySegment;

/**
 * Memory on an accelerator (a GPU) that the engine moves bytes from and into, without depending on the library that
 * owns it ({@code rdma4j-cuda}'s {@code GpuBuffer} implements it). The engine registers it with the backend directly
 * ({@link EngineBackend#registerDevice}) or, when the backend cannot, stages it through registered host memory with
 * {@link #copyToHost} and {@link #copyFromHost}.
 *
 * <p><b>Ordering.</b> The engine calls {@link #beforeNicRead()} before the first byte of this memory leaves through a
 * NIC or a staging copy (a write from it, or publishing it for peers to read), and {@link #afterNicWrite()} after a NIC
 * wrote into it and before the transfer's future completes or a notification naming it reaches the user. Both may
 * block.
 */
public interface DeviceMemory {
    /** Which device API owns the memory. */
    enum Kind {
        /** CUDA device memory ({@code CUdeviceptr}); backends map it to {@code FI_HMEM_CUDA} or GPUDirect RDMA. */
        CUDA
    }

    /** @return which API owns the memory */
    Kind kind();

    /** @return the device's ordinal among the devices the process sees ({@code CUDA_VISIBLE_DEVICES} applied) */
    int deviceOrdinal();

    /** @return the device address of byte 0 */
    long address();

    /** @return the length in bytes (> 0) */
    long length();

    /** @return the device's PCI address {@code dddd:bb:dd.f}, which ranks the NICs near it */
    String pciAddress();

    /**
     * Makes the device's work that produced this memory complete (synchronize the producing stream or context) before a
     * NIC reads it.
     */
    void beforeNicRead();

    /**
     * Makes a NIC's writes into this memory visible to the device's later work ({@code cuFlushGPUDirectRDMAWrites}).
     */
    void afterNicWrite();

    /**
     * Copies {@code target.byteSize()} bytes at {@code offset} of this memory into host memory {@code target}
     * (synchronous).
     */
    void copyToHost(long offset, MemorySegment target);

    /** Copies all of host memory {@code source} into this memory at {@code offset} (synchronous). */
    void copyFromHost(MemorySegment source, long offset);

    /**
     * Exports the pages under this memory as a dma-buf for {@code ibv_reg_dmabuf_mr}. Close the result once registered
     * (the registration keeps the buffer alive).
     *
     * @throws UnsupportedOperationException when the device, its driver or this implementation cannot export one (the
     *     message says why)
     */
    default DmaBufHandle exportDmaBuf() {
        throw new UnsupportedOperationException(this + " cannot export a dma-buf");
    }

    /**
     * A dma-buf file descriptor over device memory, with what {@code ibv_reg_dmabuf_mr(pd, offset, length, iova, fd,
     * access)} takes: {@link #offset()} is the memory's start inside the fd (pointer minus the page-aligned base).
     */
    interface DmaBufHandle extends AutoCloseable {
        /** @return the dma-buf file descriptor */
        int fd();

        /** @return where the memory starts inside the fd */
        long offset();

        /** @return the memory's length */
        long length();

        /** @return the device address to register as iova */
        long iova();

        /** Closes the file descriptor. */
        @Override
        void close();
    }
}
