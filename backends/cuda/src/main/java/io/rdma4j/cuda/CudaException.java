package io.rdma4j.cuda;

import io.rdma4j.NativeCallException;
import io.rdma4j.cuda.ffi.CUresult;
import io.rdma4j.cuda.ffi.CudaDriver;

/**
 * A CUDA driver call returned an error {@code CUresult}. The message names the function, its arguments, the code, the
 * enumerator's name and the driver's text, e.g. {@code cuMemAlloc_v2(bytesize=1048576) failed: error 2
 * (CUDA_ERROR_OUT_OF_MEMORY: out of memory)}.
 */
public final class CudaException extends NativeCallException {
    private final String errorName;

    CudaException(String function, String args, int code, String errorName, String errorString, String hint) {
        super(function, args, code, errorName + (errorString == null ? "" : ": " + errorString), hint);
        this.errorName = errorName;
    }

    /**
     * @return the {@code CUresult} enumerator, e.g. {@code CUDA_ERROR_NO_DEVICE}, or {@code CUresult(n)} for an unknown
     *     code
     */
    public String errorName() {
        return errorName;
    }

    /** Throws a {@link CudaException} unless {@code result} is {@code CUDA_SUCCESS}. */
    static void check(int result, String function, String args) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw of(result, function, args);
        }
    }

    static CudaException of(int result, String function, String args) {
        String name = CUresult.name(result);
        if (name == null) {
            name = CudaDriver.errorName(result);
        }
        if (name == null) {
            name = "CUresult(" + result + ")";
        }
        return new CudaException(function, args, result, name, CudaDriver.errorString(result), hint(result));
    }

    /** What to do next, where the code says it. */
    static String hint(int code) {
        return switch (code) {
            case CUresult.CUDA_ERROR_NO_DEVICE ->
                "No GPU is visible to this process: check nvidia-smi, /dev/nvidia*, and "
                        + CudaVisibleDevices.describe(System.getenv(CudaVisibleDevices.VARIABLE));
            case CUresult.CUDA_ERROR_STUB_LIBRARY ->
                "The libcuda.so.1 found is the CUDA toolkit's stub, not a driver: install the NVIDIA"
                        + " driver and keep the toolkit's stubs directory off LD_LIBRARY_PATH";
            case CUresult.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ->
                "libcuda and the loaded nvidia kernel module are different versions:"
                        + " reload the module or reboot after a driver upgrade";
            case CUresult.CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, CUresult.CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE ->
                "The installed NVIDIA driver is too old for this call: upgrade the driver";
            case CUresult.CUDA_ERROR_OUT_OF_MEMORY ->
                "The GPU is out of memory: free buffers or allocate less (nvidia-smi shows usage)";
            case CUresult.CUDA_ERROR_INVALID_CONTEXT, CUresult.CUDA_ERROR_CONTEXT_IS_DESTROYED ->
                "The context is not valid on this thread: keep its CudaContext open while buffers are in use";
            case CUresult.CUDA_ERROR_NOT_SUPPORTED ->
                "The GPU or driver lacks this feature (dma-buf export needs an open-kernel-module"
                        + " driver 515+ and Linux 5.12+; check CudaDevice.dmaBufSupported())";
            default -> null;
        };
    }
}
