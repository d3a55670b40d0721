package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.cuda.ffi.CudaDriver;
import io.rdma4j.ffi.ChildJvm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probe on this host, and the no-GPU paths of a real driver injected with a fault library: a {@code libcuda.so.1}
 * whose {@code cuInit} returns a chosen {@code CUresult}, loaded by a child JVM through {@code LD_LIBRARY_PATH}.
 */
class CudaAvailabilityTest {
    /** Fault injection only: each function returns what the test asks for through the environment. */
    private static final String FAULTY_LIBCUDA = """
            #include <stdlib.h>
            static int env(const char *name, int dflt) { const char *v = getenv(name); return v ? atoi(v) : dflt; }
            int cuInit(unsigned int flags) { return flags == 0 ? env("FAULT_CUINIT", 100) : 1; }
            int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
            int cuDeviceGetCount(int *n) { *n = env("FAULT_DEVICE_COUNT", 0); return 0; }
            int cuGetErrorName(int e, const char **s) {
              switch (e) { case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
                           case 34: *s = "CUDA_ERROR_STUB_LIBRARY"; return 0;
                           case 4242: *s = "CUDA_ERROR_FROM_THE_FUTURE"; return 0; default: return 1; }
            }
            int cuGetErrorString(int e, const char **s) {
              switch (e) { case 100: *s = "fault: no CUDA-capable device is detected"; return 0;
                           case 34: *s = "fault: CUDA driver is a stub library"; return 0; default: return 1; }
            }
            """;

    @Test
    void probeNeverThrowsAndEveryUseExplainsWhy() {
        boolean available = Cuda.isAvailable();
        if (available) {
            assertTrue(Cuda.deviceCount() > 0);
            assertTrue(Cuda.driverVersion() >= 1000);
            Cuda.ensureAvailable();
            return;
        }
        Throwable cause = Cuda.unavailabilityCause();
        assertNotNull(cause);
        var e = assertThrows(BackendUnavailableException.class, Cuda::ensureAvailable);
        assertTrue(e.getMessage().contains(cause.getMessage()), e.getMessage());
        assertThrows(BackendUnavailableException.class, () -> Cuda.device(0));
        assertThrows(BackendUnavailableException.class, Cuda::deviceCount);
        assertThrows(BackendUnavailableException.class, Cuda::devices);
        if (!CudaDriver.LIBRARY.isAvailable()) {
            // no driver at all (this build host): the reason names the library and how to get it
            assertTrue(
                    e.getMessage().contains("libcuda.so.1") && e.getMessage().contains("NVIDIA driver"),
                    e.getMessage());
        }
    }

    @Test
    void driverWithoutGpuReportsNoDeviceWithCodeNameTextAndHint(@TempDir Path dir) throws Exception {
        List<String> out = probeWithFaultyDriver(dir, "100", "0", null);
        assertEquals("available=false", out.get(0));
        assertEquals(
                "cause=cuInit(Flags=0) failed: error 100 (CUDA_ERROR_NO_DEVICE: fault: no CUDA-capable device is detected)."
                        + " No GPU is visible to this process: check nvidia-smi, /dev/nvidia*, and CUDA_VISIBLE_DEVICES is unset (every GPU is visible)",
                out.get(1));
        assertEquals("device(0)=BackendUnavailableException", out.get(2));
    }

    @Test
    void toolkitStubIsRecognizedAsNotADriver(@TempDir Path dir) throws Exception {
        List<String> out = probeWithFaultyDriver(dir, "34", "0", null);
        assertEquals("available=false", out.get(0));
        assertTrue(
                out.get(1)
                                .startsWith(
                                        "cause=cuInit(Flags=0) failed: error 34 (CUDA_ERROR_STUB_LIBRARY: fault: CUDA driver is a stub library)")
                        && out.get(1).contains("toolkit's stub"),
                out.get(1));
    }

    @Test
    void codeUnknownToThisTableIsKeptAndNamedByTheDriver(@TempDir Path dir) throws Exception {
        List<String> out = probeWithFaultyDriver(dir, "4242", "0", null);
        assertEquals("cause=cuInit(Flags=0) failed: error 4242 (CUDA_ERROR_FROM_THE_FUTURE)", out.get(1));
        out = probeWithFaultyDriver(dir, "4243", "0", null);
        assertEquals("cause=cuInit(Flags=0) failed: error 4243 (CUresult(4243))", out.get(1));
    }

    @Test
    void emptyCudaVisibleDevicesIsNamedAsTheReasonNoGpuIsSeen(@TempDir Path dir) throws Exception {
        List<String> out = probeWithFaultyDriver(dir, "0", "0", "");
        assertEquals("available=false", out.get(0));
        assertEquals(
                "cause=the CUDA driver reports no GPU: CUDA_VISIBLE_DEVICES='' hides every GPU: unset it or list the GPUs to use",
                out.get(1));
    }

    /** Runs {@link ProbeMain} in a child JVM whose {@code libcuda.so.1} is the fault library. */
    private static List<String> probeWithFaultyDriver(
            Path dir, String cuInit, String deviceCount, String visibleDevices)
            throws IOException, InterruptedException {
        Path lib = dir.resolve("libcuda.so.1");
        if (!Files.exists(lib)) {
            Path gcc = Path.of("/usr/bin/gcc");
            if (!Files.isExecutable(gcc)) {
                if (Boolean.getBoolean("rdma4j.require.toolchain")) {
                    throw new AssertionError(
                            "gcc is required to build the fault-injection libcuda (apt-get install gcc)");
                }
                Assumptions.abort("gcc not found: the fault-injection libcuda cannot be built (apt-get install gcc)");
            }
            Path src = dir.resolve("faulty-libcuda.c");
            Files.writeString(src, FAULTY_LIBCUDA);
            Process cc = new ProcessBuilder(
                            gcc.toString(),
                            "-shared",
                            "-fPIC",
                            "-Wl,-soname,libcuda.so.1",
                            "-o",
                            lib.toString(),
                            src.toString())
                    .redirectErrorStream(true)
                    .start();
            String log = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0, "gcc failed: " + log);
        }
        ProcessBuilder pb = ChildJvm.builder(ProbeMain.class).redirectErrorStream(true);
        pb.environment().put("LD_LIBRARY_PATH", dir.toString());
        pb.environment().put("FAULT_CUINIT", cuInit);
        pb.environment().put("FAULT_DEVICE_COUNT", deviceCount);
        if (visibleDevices == null) {
            pb.environment().remove(CudaVisibleDevices.VARIABLE);
        } else {
            pb.environment().put(CudaVisibleDevices.VARIABLE, visibleDevices);
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "probe JVM hung:\n" + out);
        assertEquals(0, p.exitValue(), "probe JVM failed:\n" + out);
        List<String> lines = out.lines().toList();
        assertFalse(lines.size() < 3, out);
        return lines;
    }

    /** Child JVM: probes CUDA and prints what a user would see. */
    public static final class ProbeMain {
        public static void main(String[] args) {
            System.out.println("available=" + Cuda.isAvailable());
            System.out.println("cause="
                    + (Cuda.unavailabilityCause() == null
                            ? ""
                            : Cuda.unavailabilityCause().getMessage()));
            try {
                Cuda.device(0);
                System.out.println("device(0)=ok");
            } catch (RuntimeException e) {
                System.out.println("device(0)=" + e.getClass().getSimpleName());
            }
        }
    }
}
