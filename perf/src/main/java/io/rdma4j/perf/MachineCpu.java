package io.rdma4j.perf;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where a whole machine's CPU went during a timed step: the kernel's counters in {@code /proc/stat} (user, system,
 * interrupt and softirq, idle time of all CPUs, in clock ticks; context switches), and this JVM's JIT compilation and
 * garbage collection time. Taken before and after a step, the difference divided by the step's operations says what
 * each operation cost the machine, beside the time it took: in the test VM, where rxe's work runs in the same guest
 * CPUs as the bench, a thread that spins or a compiler that runs takes time from the device itself.
 *
 * @param userTicks user and nice time of all CPUs
 * @param systemTicks system time
 * @param irqTicks hard and soft interrupt time (rxe's packet work runs in softirq)
 * @param idleTicks idle and I/O wait time
 * @param contextSwitches context switches on all CPUs
 * @param jitMillis this JVM's total compilation time
 * @param gcMillis this JVM's total collection time
 */
record MachineCpu(
        long userTicks,
        long systemTicks,
        long irqTicks,
        long idleTicks,
        long contextSwitches,
        long jitMillis,
        long gcMillis) {
    /** Linux's USER_HZ: /proc/stat counts in hundredths of a second on every architecture the JDK runs on. */
    private static final double TICK_US = 10_000;

    private static final Path STAT = Path.of("/proc/stat");

    /** {@return the counters now, or null where {@code /proc/stat} is missing or not in the kernel's format} */
    static MachineCpu now() {
        String text;
        try {
            text = Files.readString(STAT, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return null;
        }
        var compile = ManagementFactory.getCompilationMXBean();
        long jit = compile != null && compile.isCompilationTimeMonitoringSupported()
                ? compile.getTotalCompilationTime()
                : 0;
        long gc = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, b.getCollectionTime());
        }
        return fromStat(text, jit, gc);
    }

    /**
     * {@return the counters in a {@code /proc/stat} text, or null where its "cpu" or "ctxt" line is missing or not
     * numbers}
     *
     * @param text the file's content
     * @param jitMillis this JVM's compilation time to carry along
     * @param gcMillis its collection time
     */
    static MachineCpu fromStat(String text, long jitMillis, long gcMillis) {
        // no regular expressions or streams: the bench reads this between measured rounds, and code that only runs here
        // would be compiled during them (the intr line alone holds hundreds of numbers)
        long[] cpu = numbers(line(text, "cpu "), 7);
        long[] ctxt = numbers(line(text, "ctxt "), 1);
        if (cpu == null || ctxt == null) {
            return null;
        }
        // user nice system idle iowait irq softirq
        return new MachineCpu(cpu[0] + cpu[1], cpu[2], cpu[5] + cpu[6], cpu[3] + cpu[4], ctxt[0], jitMillis, gcMillis);
    }

    /** {@return the rest of the line that starts with {@code key}, or null} */
    private static String line(String text, String key) {
        int at = text.startsWith(key) ? 0 : text.indexOf("\n" + key);
        if (at < 0) {
            return null;
        }
        int from = at == 0 ? key.length() : at + 1 + key.length();
        int end = text.indexOf('\n', from);
        return text.substring(from, end < 0 ? text.length() : end);
    }

    /** {@return the first {@code n} space-separated non-negative numbers of {@code rest}, or null} */
    private static long[] numbers(String rest, int n) {
        if (rest == null) {
            return null;
        }
        long[] out = new long[n];
        int at = 0;
        for (int i = 0; i < n; i++) {
            while (at < rest.length() && rest.charAt(at) == ' ') {
                at++;
            }
            int from = at;
            while (at < rest.length() && rest.charAt(at) != ' ') {
                at++;
            }
            if (from == at) {
                return null;
            }
            try {
                out[i] = Long.parseLong(rest, from, at, 10);
            } catch (NumberFormatException e) {
                return null;
            }
            if (out[i] < 0) {
                return null;
            }
        }
        return out;
    }

    /**
     * {@return one line: per operation, the microseconds of user, system, interrupt and idle time on all CPUs, the
     * context switches, and the JIT and GC milliseconds in the whole step; "unknown" when either sample is missing}
     *
     * @param before the counters before the step
     * @param after the counters after it
     * @param operations the step's operations (writes)
     */
    static String perOperation(MachineCpu before, MachineCpu after, long operations) {
        if (before == null || after == null || operations <= 0) {
            return "machine CPU unknown (no /proc/stat)";
        }
        double n = operations;
        return String.format(
                Locale.ROOT,
                "per write: user %.0f us, system %.0f, irq+softirq %.0f, idle %.0f (all CPUs); %.1f context switches;"
                        + " JIT %d ms, GC %d ms in the step",
                (after.userTicks - before.userTicks) * TICK_US / n,
                (after.systemTicks - before.systemTicks) * TICK_US / n,
                (after.irqTicks - before.irqTicks) * TICK_US / n,
                (after.idleTicks - before.idleTicks) * TICK_US / n,
                (after.contextSwitches - before.contextSwitches) / n,
                after.jitMillis - before.jitMillis,
                after.gcMillis - before.gcMillis);
    }
}
