package io.rdma4j.cuda;

import io.rdma4j.cuda.ffi.CudaDriver;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A visible GPU: its ordinal, driver handle, name and PCI address (normalized to {@code dddd:bb:dd.f}, so topology can
 * rank the NICs near it). Holds no native resource; {@link #retainPrimaryContext()} does.
 */
public final class CudaDevice {
    private static final int NAME_LENGTH = 256;
    /** {@code cuDeviceGetPCIBusId} needs at least 13 bytes ("dddd:bb:dd.f"); drivers may print an 8-digit domain. */
    private static final int PCI_ID_LENGTH = 64;

    private final int ordinal;
    private final int handle;
    private final String name;
    private final String pciAddress;

    private CudaDevice(int ordinal, int handle, String name, String pciAddress) {
        this.ordinal = ordinal;
        this.handle = handle;
        this.name = name;
        this.pciAddress = pciAddress;
    }

    static CudaDevice open(int ordinal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dev = arena.allocate(CudaDriver.CUdevice);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuDeviceGet, dev, ordinal), "cuDeviceGet", "ordinal=" + ordinal);
            int handle = dev.get(CudaDriver.CUdevice, 0);
            MemorySegment name = arena.allocate(NAME_LENGTH);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuDeviceGetName, name, NAME_LENGTH, handle),
                    "cuDeviceGetName",
                    "dev=" + handle);
            MemorySegment pci = arena.allocate(PCI_ID_LENGTH);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuDeviceGetPCIBusId, pci, PCI_ID_LENGTH, handle),
                    "cuDeviceGetPCIBusId",
                    "dev=" + handle);
            return new CudaDevice(ordinal, handle, name.getString(0), PciAddress.normalize(pci.getString(0)));
        }
    }

    /** @return the ordinal among visible GPUs */
    public int ordinal() {
        return ordinal;
    }

    /** @return the driver's {@code CUdevice} handle */
    public int handle() {
        return handle;
    }

    /** @return the marketing name, e.g. {@code NVIDIA H200} */
    public String name() {
        return name;
    }

    /** @return the PCI address, {@code dddd:bb:dd.f} lower case */
    public String pciAddress() {
        return pciAddress;
    }

    /** {@code cuDeviceGetAttribute}: one {@code CU_DEVICE_ATTRIBUTE_*} value from {@link CudaDriver}. */
    public int attribute(int attribute) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.JAVA_INT);
            CudaException.check(
                    CudaDriver.call(CudaDriver.cuDeviceGetAttribute, out, attribute, handle),
                    "cuDeviceGetAttribute",
                    "attrib=" + attribute + ", dev=" + handle);
            return out.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /** @return whether NICs may reach this GPU's memory directly (GPUDirect RDMA) */
    public boolean gpuDirectRdmaSupported() {
        return attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) != 0;
    }

    /** @return whether device memory can be exported as a dma-buf ({@link GpuBuffer#exportDmaBuf()}) */
    public boolean dmaBufSupported() {
        return attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) != 0;
    }

    /** @return whether {@link CudaContext#flushGpuDirectRdmaWrites} is supported on this GPU */
    public boolean flushGpuDirectRdmaWritesSupported() {
        return (attribute(CudaDriver.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS)
                        & CudaDriver.CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST)
                != 0;
    }

    /**
     * Retains this GPU's primary context (the one CUDA runtimes and frameworks share); close the result to release it.
     */
    public CudaContext retainPrimaryContext() {
        return CudaContext.retain(this);
    }

    @Override
    public String toString() {
        return "GPU " + ordinal + " (" + name + ", " + pciAddress + ")";
    }
}
