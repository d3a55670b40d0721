package io.rdma4j.cuda;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * Runs this module's tests, the {@code gpu}-tagged ones included, without Maven: {@code scripts/gpu-check} carries a
 * jlinked JDK and the test classpath to the GPU machine and starts this class there. Exits 1 on any failure, and with
 * {@code --require-gpu} also when a GPU test was skipped (on the GPU machine a skip means the check proved nothing).
 */
public final class GpuCheck {
    private GpuCheck() {}

    /**
     * Host memory between two engines over the carried libfabric (tcp on loopback) before any GPU test: proves the
     * runtime, the class path and the native libraries the GPU engine transfer needs, on any machine, so a broken carry
     * shows up here (and on the build host, where {@code scripts/gpu-check device} runs too) rather than as a GPU test
     * failure.
     */
    static boolean engineSmoke() {
        long bytes = 16L << 20;
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
                io.rdma4j.engine.TransferEngine a = io.rdma4j.engine.TransferEngine.builder()
                        .name("smoke-a")
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .build();
                io.rdma4j.engine.TransferEngine b = io.rdma4j.engine.TransferEngine.builder()
                        .name("smoke-b")
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .build()) {
            java.lang.foreign.MemorySegment src = arena.allocate(bytes, 4096);
            java.lang.foreign.MemorySegment dst = arena.allocate(bytes, 4096);
            for (long i = 0; i < bytes; i += 8) {
                src.set(java.lang.foreign.ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            b.publish("smoke", b.register(dst), io.rdma4j.engine.Access.anyPeer());
            long t0 = System.nanoTime();
            a.write(a.register(src), a.peer(b.name()).buffer("smoke"), io.rdma4j.engine.TransferOptions.tag(1))
                    .join();
            if (b.awaitTag(1, java.time.Duration.ofSeconds(60)) == null || src.mismatch(dst) != -1) {
                System.out.println("ENGINE SMOKE FAILED: the 16 MiB host-memory write did not land intact");
                return false;
            }
            System.out.printf(
                    "engine smoke: %s; 16 MiB host memory written and verified in %.1f ms%n",
                    a.description(), (System.nanoTime() - t0) / 1e6);
            try (var maps = java.nio.file.Files.lines(java.nio.file.Path.of("/proc/self/maps"))) {
                maps.map(l -> l.substring(l.lastIndexOf(' ') + 1))
                        .filter(l -> l.contains("/libfabric.so"))
                        .distinct()
                        .forEach(l -> System.out.println("engine smoke: libfabric loaded from " + l));
            }
            return true;
        } catch (Throwable t) {
            System.out.println("ENGINE SMOKE FAILED: " + t);
            t.printStackTrace(System.out);
            return false;
        }
    }

    public static void main(String[] args) {
        boolean requireGpu = java.util.List.of(args).contains("--require-gpu");
        System.out.println("CUDA available: " + Cuda.isAvailable()
                + (Cuda.isAvailable()
                        ? ", driver " + Cuda.driverVersion() + ", " + Cuda.deviceCount() + " GPU(s)"
                        : " (" + Cuda.unavailabilityCause().getMessage() + ")"));
        boolean engineOk = engineSmoke();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectPackage("io.rdma4j.cuda"))
                .build();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        int[] gpuSkipped = {0};
        TestExecutionListener log = new TestExecutionListener() {
            @Override
            public void executionSkipped(TestIdentifier test, String reason) {
                System.out.println("SKIPPED " + test.getDisplayName() + ": " + reason);
                if (test.getTags().stream().anyMatch(t -> t.getName().equals("gpu"))) {
                    gpuSkipped[0]++;
                }
            }

            @Override
            public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                if (!test.isTest() && result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                    return;
                }
                System.out.println(result.getStatus() + " " + test.getLegacyReportingName()
                        + result.getThrowable().map(t -> ": " + t).orElse(""));
                if (result.getStatus() == TestExecutionResult.Status.ABORTED
                        && test.getTags().stream().anyMatch(t -> t.getName().equals("gpu"))) {
                    gpuSkipped[0]++;
                }
            }
        };
        LauncherFactory.create().execute(request, summary, log);
        PrintWriter out = new PrintWriter(System.out, true);
        summary.getSummary().printTo(out);
        summary.getSummary().printFailuresTo(out, 30);
        boolean failed = !engineOk
                || summary.getSummary().getTotalFailureCount() > 0
                || summary.getSummary().getTestsFoundCount() == 0;
        if (requireGpu && gpuSkipped[0] > 0) {
            System.out.println(gpuSkipped[0] + " GPU test(s) skipped or aborted while --require-gpu was given");
            failed = true;
        }
        System.out.println(failed ? "GPU CHECK FAILED" : "GPU CHECK PASSED");
        System.exit(failed ? 1 : 0);
    }
}
