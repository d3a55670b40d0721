package io.rdma4j.ffi;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * The rule of {@link Extended} tests: skipped per test where {@code ../shared} is absent, and never skipped where it is
 * present (an assumption that aborts such a test fails it instead).
 */
public final class ExtendedSuite
        implements ExecutionCondition,
                TestExecutionExceptionHandler,
                LifecycleMethodExecutionExceptionHandler,
                AfterTestExecutionCallback {
    /** The start of every skip reason; {@code ./rdma4j test} counts the skipped tests whose reason starts with it. */
    public static final String SKIP_MARK = "extended suite skipped:";

    /**
     * Where each extended test that ran is recorded, one line each, relative to the module's folder (Surefire's working
     * directory): {@code ./rdma4j test} counts them, since JUnit's reports do not carry tags.
     */
    public static final String RAN_LOG = "target/rdma4j-extended-ran.txt";

    /** JUnit configuration parameter: {@code false} keeps samples run by this extension's own test out of the log. */
    public static final String RECORD_PARAMETER = "rdma4j.extended.record";

    /** Whether the captures are present: {@code ../shared} (or {@code $RDMA4J_SHARED}) is a folder. */
    public static boolean sharedPresent() {
        return Files.isDirectory(TestPaths.shared());
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (context.getTestMethod().isEmpty()) {
            // decided per test, so that the count of skipped tests is a count of tests, not of classes
            return ConditionEvaluationResult.enabled("extended suite: decided per test");
        }
        Path shared = TestPaths.shared();
        return Files.isDirectory(shared)
                ? ConditionEvaluationResult.enabled("extended suite: captures found in " + shared)
                : ConditionEvaluationResult.disabled(SKIP_MARK + " no real-machine captures at " + shared
                        + " (put the shared captures there, or set RDMA4J_SHARED)");
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw failIfSkipped(t);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw failIfSkipped(t);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw failIfSkipped(t);
    }

    private static Throwable failIfSkipped(Throwable t) {
        if (t instanceof TestAbortedException) {
            AssertionFailedError e = new AssertionFailedError("an extended test must not skip while the captures in "
                    + TestPaths.shared() + " are present, but it was aborted: " + t.getMessage());
            e.initCause(t);
            return e;
        }
        return t;
    }

    @Override
    public void afterTestExecution(ExtensionContext context) {
        if (context.getConfigurationParameter(RECORD_PARAMETER)
                .map("false"::equals)
                .orElse(false)) {
            return;
        }
        String line =
                (context.getExecutionException().isPresent() ? "failed " : "passed ") + context.getUniqueId() + "\n";
        synchronized (ExtendedSuite.class) {
            try {
                Path log = Path.of(RAN_LOG);
                Files.createDirectories(log.toAbsolutePath().getParent());
                Files.writeString(
                        log, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot record the extended test in " + RAN_LOG, e);
            }
        }
    }
}
