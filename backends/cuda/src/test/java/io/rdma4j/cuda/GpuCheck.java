package io.rdma4j.cuda;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.engine.TestExecutionResult;

/**
 * Runs this module's tests, the {@code gpu}-tagged ones included, without Maven: {@code scripts/gpu-check} carries a
 * jlinked JDK and the test classpath to the GPU machine and starts this class there. Exits 1 on any failure, and with
 * {@code --require-gpu} also when a GPU test was skipped (on the GPU machine a skip means the check proved nothing).
 */
public final class GpuCheck {
    private GpuCheck() {
    }

    public static void main(String[] args) {
        boolean requireGpu = java.util.List.of(args).contains("--require-gpu");
        System.out.println("CUDA available: " + Cuda.isAvailable()
                + (Cuda.isAvailable() ? ", driver " + Cuda.driverVersion() + ", " + Cuda.deviceCount() + " GPU(s)"
                        : " (" + Cuda.unavailabilityCause().getMessage() + ")"));
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectPackage("io.rdma4j.cuda")).build();
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
        boolean failed = summary.getSummary().getTotalFailureCount() > 0 || summary.getSummary().getTestsFoundCount() == 0;
        if (requireGpu && gpuSkipped[0] > 0) {
            System.out.println(gpuSkipped[0] + " GPU test(s) skipped or aborted while --require-gpu was given");
            failed = true;
        }
        System.out.println(failed ? "GPU CHECK FAILED" : "GPU CHECK PASSED");
        System.exit(failed ? 1 : 0);
    }
}
