package io.rdma4j.cuda.ffi;

import io.rdma4j.ffi.NativeFunction;
import io.rdma4j.ffi.NativeLibrary;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Raw bindings to the CUDA driver API, {@code cuda.h}, in {@code libcuda.so.1} (the driver's library, never the
 * runtime's {@code libcudart}). Functions bind lazily; each static method calls one C function and returns its
 * {@code CUresult} unchanged. Where {@code cuda.h} versions a name ({@code #define cuMemAlloc cuMemAlloc_v2}), the
 * exported symbol ({@code cuMemAlloc_v2}) is bound: the unversioned symbols are the 32-bit-size ABI of CUDA 3.x.
 *
 * <p>The driver applies {@code CUDA_VISIBLE_DEVICES} itself when {@code cuInit} runs: ordinals here are the visible
 * devices' ordinals, renumbered from 0 in the order the variable lists them.
 */
public final class CudaDriver {
    /** The driver library; loading never throws (see {@link NativeLibrary}). */
    public static final NativeLibrary LIBRARY = NativeLibrary.builder("CUDA driver (libcuda)")
            .sonames("libcuda.so.1")
            .installHint(
                    "the NVIDIA driver provides libcuda.so.1 (Debian: apt-get install libcuda1 from non-free, or the driver's .run"
                            + " installer); the CUDA toolkit's stubs/libcuda.so is not a driver")
            .load();

    /** {@code typedef int CUdevice_v1; typedef CUdevice_v1 CUdevice;} */
    public static final ValueLayout.OfInt CUdevice = ValueLayout.JAVA_INT;
    /** {@code typedef unsigned long long CUdeviceptr_v2; typedef CUdeviceptr_v2 CUdeviceptr;} (64-bit hosts) */
    public static final ValueLayout.OfLong CUdeviceptr = ValueLayout.JAVA_LONG;
    /** {@code typedef struct CUctx_st *CUcontext;} */
    public static final AddressLayout CUcontext = ValueLayout.ADDRESS;
    /** {@code typedef struct CUstream_st *CUstream;} */
    public static final AddressLayout CUstream = ValueLayout.ADDRESS;
    /** {@code CUresult}, and every other C enum here: an {@code int}. */
    public static final ValueLayout.OfInt ENUM = ValueLayout.JAVA_INT;

    // CUpointer_attribute
    public static final int CU_POINTER_ATTRIBUTE_CONTEXT = 1;
    public static final int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
    public static final int CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6;
    public static final int CU_POINTER_ATTRIBUTE_BUFFER_ID = 7;
    public static final int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
    public static final int CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11;
    public static final int CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12;
    public static final int CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15;

    // CUmemorytype
    public static final int CU_MEMORYTYPE_HOST = 1;
    public static final int CU_MEMORYTYPE_DEVICE = 2;
    public static final int CU_MEMORYTYPE_ARRAY = 3;
    public static final int CU_MEMORYTYPE_UNIFIED = 4;

    // CUmemRangeHandleType, CUmemRangeFlags
    public static final int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1;
    public static final long CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE = 1;

    // CUflushGPUDirectRDMAWritesTarget, CUflushGPUDirectRDMAWritesScope
    public static final int CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX = 0;
    public static final int CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER = 100;
    public static final int CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES = 200;

    // CUdevice_attribute (those the GPU-memory path consults)
    public static final int CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41;
    public static final int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116;
    public static final int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117;
    public static final int CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118;
    public static final int CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124;

    // CUflushGPUDirectRDMAWritesOptions (bits of GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS)
    public static final int CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST = 1;
    public static final int CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS = 2;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
    private static final AddressLayout PTR = ValueLayout.ADDRESS;

    /** {@code CUresult cuInit(unsigned int Flags);} */
    public static final NativeFunction cuInit = fn("cuInit", INT);
    /** {@code CUresult cuDriverGetVersion(int *driverVersion);} */
    public static final NativeFunction cuDriverGetVersion = fn("cuDriverGetVersion", PTR);
    /** {@code CUresult cuGetErrorString(CUresult error, const char **pStr);} */
    public static final NativeFunction cuGetErrorString = fn("cuGetErrorString", ENUM, PTR);
    /** {@code CUresult cuGetErrorName(CUresult error, const char **pStr);} */
    public static final NativeFunction cuGetErrorName = fn("cuGetErrorName", ENUM, PTR);
    /** {@code CUresult cuDeviceGetCount(int *count);} */
    public static final NativeFunction cuDeviceGetCount = fn("cuDeviceGetCount", PTR);
    /** {@code CUresult cuDeviceGet(CUdevice *device, int ordinal);} */
    public static final NativeFunction cuDeviceGet = fn("cuDeviceGet", PTR, INT);
    /** {@code CUresult cuDeviceGetName(char *name, int len, CUdevice dev);} */
    public static final NativeFunction cuDeviceGetName = fn("cuDeviceGetName", PTR, INT, CUdevice);
    /** {@code CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);} */
    public static final NativeFunction cuDeviceGetPCIBusId = fn("cuDeviceGetPCIBusId", PTR, INT, CUdevice);
    /** {@code CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);} */
    public static final NativeFunction cuDeviceGetAttribute = fn("cuDeviceGetAttribute", PTR, ENUM, CUdevice);
    /** {@code CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);} */
    public static final NativeFunction cuDevicePrimaryCtxRetain = fn("cuDevicePrimaryCtxRetain", PTR, CUdevice);
    /**
     * {@code #define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2}: {@code CUresult
     * cuDevicePrimaryCtxRelease(CUdevice dev);}
     */
    public static final NativeFunction cuDevicePrimaryCtxRelease = fn("cuDevicePrimaryCtxRelease_v2", CUdevice);
    /** {@code CUresult cuCtxSetCurrent(CUcontext ctx);} */
    public static final NativeFunction cuCtxSetCurrent = fn("cuCtxSetCurrent", CUcontext);
    /** {@code CUresult cuCtxSynchronize(void);} */
    public static final NativeFunction cuCtxSynchronize = fn("cuCtxSynchronize");
    /** {@code CUresult cuStreamSynchronize(CUstream hStream);} */
    public static final NativeFunction cuStreamSynchronize = fn("cuStreamSynchronize", CUstream);
    /** {@code #define cuMemAlloc cuMemAlloc_v2}: {@code CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);} */
    public static final NativeFunction cuMemAlloc = fn("cuMemAlloc_v2", PTR, SIZE_T);
    /** {@code #define cuMemFree cuMemFree_v2}: {@code CUresult cuMemFree(CUdeviceptr dptr);} */
    public static final NativeFunction cuMemFree = fn("cuMemFree_v2", CUdeviceptr);
    /**
     * {@code #define cuMemcpyHtoD cuMemcpyHtoD_v2}: {@code CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void
     * *srcHost, size_t ByteCount);}
     */
    public static final NativeFunction cuMemcpyHtoD = fn("cuMemcpyHtoD_v2", CUdeviceptr, PTR, SIZE_T);
    /**
     * {@code #define cuMemcpyDtoH cuMemcpyDtoH_v2}: {@code CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice,
     * size_t ByteCount);}
     */
    public static final NativeFunction cuMemcpyDtoH = fn("cuMemcpyDtoH_v2", PTR, CUdeviceptr, SIZE_T);
    /**
     * {@code #define cuMemGetAddressRange cuMemGetAddressRange_v2}: {@code CUresult cuMemGetAddressRange(CUdeviceptr
     * *pbase, size_t *psize, CUdeviceptr dptr);}
     */
    public static final NativeFunction cuMemGetAddressRange = fn("cuMemGetAddressRange_v2", PTR, PTR, CUdeviceptr);
    /** {@code CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);} */
    public static final NativeFunction cuPointerGetAttribute = fn("cuPointerGetAttribute", PTR, ENUM, CUdeviceptr);
    /**
     * {@code CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
     * CUdeviceptr ptr);}
     */
    public static final NativeFunction cuPointerGetAttributes =
            fn("cuPointerGetAttributes", INT, PTR, PTR, CUdeviceptr);
    /** {@code CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr);} */
    public static final NativeFunction cuPointerSetAttribute = fn("cuPointerSetAttribute", PTR, ENUM, CUdeviceptr);
    /**
     * {@code CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size, CUmemRangeHandleType
     * handleType, unsigned long long flags);} ({@code dptr} and {@code size} aligned to the host page size)
     */
    public static final NativeFunction cuMemGetHandleForAddressRange =
            fn("cuMemGetHandleForAddressRange", PTR, CUdeviceptr, SIZE_T, ENUM, ValueLayout.JAVA_LONG);
    /**
     * {@code CUresult cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
     * CUflushGPUDirectRDMAWritesScope scope);}
     */
    public static final NativeFunction cuFlushGPUDirectRDMAWrites = fn("cuFlushGPUDirectRDMAWrites", ENUM, ENUM);

    private CudaDriver() {}

    private static NativeFunction fn(String name, java.lang.foreign.MemoryLayout... args) {
        return LIBRARY.function(name, FunctionDescriptor.of(ENUM, args));
    }

    /**
     * Calls a bound function returning {@code CUresult}; rethrows what the binding throws (an unavailable library, a
     * missing symbol).
     */
    public static int call(NativeFunction f, Object... args) {
        MethodHandle h = f.handle();
        try {
            return (int) h.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(f.name() + ": " + t, t);
        }
    }

    /** {@code cuGetErrorName}, or null when the driver does not know {@code code} or cannot be called. */
    public static String errorName(int code) {
        return errorText(cuGetErrorName, code);
    }

    /** {@code cuGetErrorString}, or null when the driver does not know {@code code} or cannot be called. */
    public static String errorString(int code) {
        return errorText(cuGetErrorString, code);
    }

    @SuppressWarnings(
            "restricted") // the driver returns a pointer to a static NUL-terminated string; it is read up to the NUL
    private static String errorText(NativeFunction f, int code) {
        if (!LIBRARY.isAvailable() || !f.isPresent()) {
            return null;
        }
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            MemorySegment out = arena.allocate(PTR);
            if (call(f, code, out) != CUresult.CUDA_SUCCESS) {
                return null;
            }
            MemorySegment s = out.get(PTR, 0);
            return s.equals(MemorySegment.NULL) ? null : s.reinterpret(4096).getString(0);
        }
    }
}
