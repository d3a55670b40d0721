package io.rdma4j.perf;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Warm-up until this JVM's JIT compilers go quiet: a step runs again while the compilers spent more than a tenth of its
 * time compiling, up to a cap. A fixed warm-up is enough on a real machine, where the compiler threads have cores of
 * their own; in the test VM (TCG, every guest CPU emulated on one host thread) the engine's code was still being
 * compiled through the measured rounds after one, the compiler taking the CPU that rxe's own work needs (seconds of
 * compilation in a round of a few seconds). C benchmarks next to these runs are compiled ahead of time; this measures
 * the Java side compiled, too.
 */
final class JitWarmup {
    /** A step that may be run again: a short, unmeasured round of what is then measured. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    private static final double QUIET = 0.10;

    private JitWarmup() {}

    /**
     * Runs {@code step} at least twice, then again until the last two runs each spent at most a tenth of their time
     * compiling and nothing is left to compile, starting no run after {@code maxNanos} have passed.
     *
     * @return the runs made, negative when the JIT was still busy after the last one (or this JVM does not report
     *     compilation time, in which case the step ran once)
     */
    static int untilQuiet(Step step, long maxNanos) throws Exception {
        long start = System.nanoTime();
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean known = jit != null && jit.isCompilationTimeMonitoringSupported();
        int quietRuns = 0;
        for (int run = 1; ; run++) {
            long c0 = known ? jit.getTotalCompilationTime() : 0;
            long t0 = System.nanoTime();
            step.run();
            double wallMillis = (System.nanoTime() - t0) / 1e6;
            if (!known) {
                return -run;
            }
            long compiled = jit.getTotalCompilationTime() - c0;
            quietRuns = compiled <= QUIET * wallMillis ? quietRuns + 1 : 0;
            if (quietRuns >= 2 && compilerIdle()) {
                return run;
            }
            if (System.nanoTime() - start >= maxNanos) {
                return -run;
            }
        }
    }

    /**
     * {@return whether no compilation is running or queued; true where this JVM cannot say (the compilation time then
     * decides alone)}
     */
    static boolean compilerIdle() {
        String listing = queueListing();
        return listing == null || idle(listing);
    }

    /** {@return what {@code jcmd PID Compiler.queue} prints for this JVM, or null where it has no such command} */
    static String queueListing() {
        try {
            return ManagementFactory.getPlatformMBeanServer()
                                    .invoke(
                                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                                            "compilerQueue",
                                            new Object[] {null},
                                            new String[] {String[].class.getName()})
                            instanceof String text
                    ? text
                    : null;
        } catch (JMException | RuntimeException e) {
            return null;
        }
    }

    /**
     * {@return whether a {@code Compiler.queue} listing has no entries: only its headers ("Current compiles:", "C1
     * compile queue:"...) and "Empty"}
     */
    static boolean idle(String listing) {
        for (String line : listing.split("\n")) {
            String l = line.strip();
            if (!l.isEmpty() && !l.endsWith(":") && !l.equals("Empty")) {
                return false;
            }
        }
        return true;
    }
}
