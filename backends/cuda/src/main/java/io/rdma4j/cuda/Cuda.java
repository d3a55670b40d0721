package io.rdma4j.cuda;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.cuda.ffi.CudaDriver;
import io.rdma4j.ffi.SignalGuard;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point to GPU memory through the CUDA driver API. The first use loads {@code libcuda.so.1} and runs
 * {@code cuInit(0)}; that probe never throws. On a host without the driver or without a visible GPU,
 * {@link #isAvailable()} is false and {@link #unavailabilityCause()} says why (library missing, the toolkit's stub,
 * {@code CUDA_ERROR_NO_DEVICE}, ...); every other method then throws {@link BackendUnavailableException} with that
 * reason.
 *
 * <p>Ordinals are those the driver reports after applying {@code CUDA_VISIBLE_DEVICES} (see
 * {@link CudaVisibleDevices}).
 */
public final class Cuda {
    private Cuda() {}

    private static final class Probe {
        static final Throwable CAUSE;
        static final int DRIVER_VERSION;
        static final int DEVICE_COUNT;

        static {
            Throwable cause = null;
            int version = 0;
            int count = 0;
            try {
                if (!CudaDriver.LIBRARY.isAvailable()) {
                    CudaDriver.LIBRARY.ensureAvailable(); // throws the library's own message, with the install hint
                }
                int rc = SignalGuard.around("cuInit", () -> CudaDriver.call(CudaDriver.cuInit, 0));
                CudaException.check(rc, "cuInit", "Flags=0");
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment out = arena.allocate(ValueLayout.JAVA_INT);
                    CudaException.check(CudaDriver.call(CudaDriver.cuDriverGetVersion, out), "cuDriverGetVersion", "");
                    version = out.get(ValueLayout.JAVA_INT, 0);
                    CudaException.check(CudaDriver.call(CudaDriver.cuDeviceGetCount, out), "cuDeviceGetCount", "");
                    count = out.get(ValueLayout.JAVA_INT, 0);
                }
                if (count <= 0) {
                    throw new BackendUnavailableException(
                            "the CUDA driver reports no GPU: "
                                    + CudaVisibleDevices.describe(System.getenv(CudaVisibleDevices.VARIABLE)),
                            null);
                }
            } catch (Throwable t) {
                cause = t;
            }
            CAUSE = cause;
            DRIVER_VERSION = version;
            DEVICE_COUNT = cause == null ? count : 0;
        }
    }

    /** @return true when the driver loaded, {@code cuInit} succeeded and at least one GPU is visible */
    public static boolean isAvailable() {
        return Probe.CAUSE == null;
    }

    /** @return why CUDA is not available, or null when it is */
    public static Throwable unavailabilityCause() {
        return Probe.CAUSE;
    }

    /** Throws one clear {@link BackendUnavailableException} when CUDA is not available. */
    public static void ensureAvailable() {
        Throwable cause = Probe.CAUSE;
        if (cause != null) {
            throw new BackendUnavailableException("CUDA GPU memory is not available: " + cause.getMessage(), cause);
        }
    }

    /** @return the driver's CUDA version, {@code 1000 * major + 10 * minor} (13000 is 13.0) */
    public static int driverVersion() {
        ensureAvailable();
        return Probe.DRIVER_VERSION;
    }

    /** @return the number of GPUs visible to this process */
    public static int deviceCount() {
        ensureAvailable();
        return Probe.DEVICE_COUNT;
    }

    /** @param ordinal 0 to {@link #deviceCount()} - 1 */
    public static CudaDevice device(int ordinal) {
        ensureAvailable();
        if (ordinal < 0 || ordinal >= Probe.DEVICE_COUNT) {
            throw new IllegalArgumentException(
                    "GPU ordinal " + ordinal + " is out of range: " + Probe.DEVICE_COUNT + " GPU(s) visible ("
                            + CudaVisibleDevices.describe(System.getenv(CudaVisibleDevices.VARIABLE)) + ")");
        }
        return CudaDevice.open(ordinal);
    }

    /** @return every visible GPU, by ordinal */
    public static List<CudaDevice> devices() {
        List<CudaDevice> out = new ArrayList<>();
        for (int i = 0; i < deviceCount(); i++) {
            out.add(device(i));
        }
        return List.copyOf(out);
    }
}
