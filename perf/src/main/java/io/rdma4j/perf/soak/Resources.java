package io.rdma4j.perf.soak;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.ObjectName;

/**
 * What one process holds: open file descriptors ({@code /proc/self/fd}), live threads, native memory the JVM tracks
 * (Native Memory Tracking's committed total less the Java heap, the code cache and class metadata, which grow with
 * warm-up and heap sizing, not with leaks; -1 without {@code -XX:NativeMemoryTracking=summary}) and resident memory
 * ({@code VmRSS}, shown only: it moves with the heap), and the threads' names, to name those that grew. One line
 * crosses the process boundary.
 */
record Resources(long fds, long threads, long nativeKb, long rssKb, List<String> threadNames) {
    private static final Pattern NMT_TOTAL = Pattern.compile("Total: reserved=\\d+KB, committed=(\\d+)KB");
    private static final Pattern NMT_AREA =
            Pattern.compile("-\\s+(Java Heap|Class|Code) \\(reserved=\\d+KB, committed=(\\d+)KB");

    /** Fewer than this many descriptors, threads or KiB more at the end is not growth (see {@link #grew}). */
    static final long FD_SLACK = 4;

    static final long THREAD_SLACK = 2;
    static final long NATIVE_SLACK_KB = 8 << 10;

    /** {@return this process's resources now} */
    static Resources self() {
        long fds;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            fds = s.count() - 1; // the listing's own descriptor
        } catch (IOException e) {
            fds = -1;
        }
        long rss = -1;
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) {
                    rss = Long.parseLong(l.replaceAll("\\D", ""));
                }
            }
        } catch (IOException e) {
            rss = -1;
        }
        List<String> names = Thread.getAllStackTraces().keySet().stream()
                .map(t -> t.getName().replaceAll("\\s", "_"))
                .sorted()
                .toList();
        return new Resources(fds, ManagementFactory.getThreadMXBean().getThreadCount(), trackedNativeKb(), rss, names);
    }

    private static long trackedNativeKb() {
        String nmt;
        try {
            nmt = (String) ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "vmNativeMemory",
                            new Object[] {new String[] {"summary", "scale=KB"}},
                            new String[] {String[].class.getName()});
        } catch (Exception e) {
            return -1;
        }
        Matcher t = NMT_TOTAL.matcher(nmt);
        if (!t.find()) {
            return -1; // tracking is off
        }
        long kb = Long.parseLong(t.group(1));
        for (Matcher m = NMT_AREA.matcher(nmt); m.find(); ) {
            kb -= Long.parseLong(m.group(2));
        }
        return kb;
    }

    String line() {
        return fds + " " + threads + " " + nativeKb + " " + rssKb + " " + String.join(" ", threadNames);
    }

    static Resources parse(String line) {
        String[] f = line.trim().split(" ");
        return new Resources(
                Long.parseLong(f[0]),
                Long.parseLong(f[1]),
                Long.parseLong(f[2]),
                Long.parseLong(f[3]),
                List.of(f).subList(4, f.length));
    }

    /** {@return the names of threads here and not at {@code start}, one per extra thread of a name} */
    List<String> newThreads(Resources start) {
        List<String> extra = new ArrayList<>(threadNames);
        start.threadNames.forEach(extra::remove);
        return extra;
    }

    /**
     * {@return what grew from {@code start} to this snapshot beyond the slack, or an empty string}. The slack: a
     * descriptor or thread the JDK opens lazily (a selector, a cleaner) may first appear after the start, and NMT's
     * malloc arenas move by megabytes as threads come and go; a leak per injected fault, over the hundreds of faults of
     * a soak, exceeds it.
     */
    String grew(Resources start) {
        StringBuilder sb = new StringBuilder();
        if (fds - start.fds > FD_SLACK) {
            sb.append(" fds +").append(fds - start.fds);
        }
        if (threads - start.threads > THREAD_SLACK) {
            sb.append(" threads +").append(threads - start.threads).append(" ").append(newThreads(start));
        }
        if (nativeKb >= 0 && start.nativeKb >= 0 && nativeKb - start.nativeKb > NATIVE_SLACK_KB) {
            sb.append(" native +").append(nativeKb - start.nativeKb).append(" KiB");
        }
        return sb.toString().strip();
    }
}
