package io.rdma4j.cli;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarConsumer;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The progress of one long job, in bytes, on standard error (standard output stays the command's parseable report). On
 * a terminal: a bar with the rate and the time left, drawn by {@code me.tongfei:progressbar}. Otherwise (a pipe, a
 * file, a CI log): a plain line every {@link ProgressOptions#every()}, such as {@code rdma4j nvme write: 512.0 MiB of
 * 1.0 GiB (50%), 1.2 GB/s, ETA 0:00:04}, and a last one at 100% when there was any; a job shorter than the interval
 * prints nothing.
 *
 * <p>{@link #add} is called from I/O completion threads: it only counts, and hands a due line to a printer thread, so
 * that no queue thread ever waits on a slow standard error.
 */
final class Progress implements AutoCloseable {
    private static final Progress OFF = new Progress("", 0, null, null);
    private static final String STOP = new String("stop");

    private final String label;
    private final long total;
    private final long t0 = System.nanoTime();
    private final AtomicLong done = new AtomicLong();
    private final PrintStream err;
    private final ProgressBar bar;
    private final BarLine barLine;
    private final long everyNanos;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread printer;
    private volatile long nextLine;
    private long shown = -1; // guarded by this
    private int printed; // the printer's own; read after joining it

    /**
     * Starts reporting.
     *
     * @param label the command, such as {@code nvme write}
     * @param total bytes the job moves
     */
    static Progress start(String label, long total, ProgressOptions options) {
        if (!options.enabled() || total <= 0) {
            return OFF;
        }
        PrintStream err = System.err;
        if (Terminal.stderrIsTerminal()) {
            BarLine line = new BarLine(err, Terminal.columns(80) - 1);
            return new Progress(label, total, bar(label, total, line), line);
        }
        return new Progress(label, total, err, options.every().toNanos());
    }

    private Progress(String label, long total, ProgressBar bar, BarLine barLine) {
        this.label = label;
        this.total = total;
        this.err = null;
        this.bar = bar;
        this.barLine = barLine;
        this.everyNanos = 0;
        this.printer = null;
    }

    private Progress(String label, long total, PrintStream err, long everyNanos) {
        this.label = label;
        this.total = total;
        this.err = err;
        this.bar = null;
        this.barLine = null;
        this.everyNanos = everyNanos;
        this.nextLine = t0 + everyNanos;
        this.printer = Thread.ofPlatform().name("rdma4j-progress").daemon().start(this::print);
    }

    private static ProgressBar bar(String label, long total, BarLine line) {
        boolean mib = total >= 1L << 20;
        boolean utf8 = StandardCharsets.UTF_8.name().equalsIgnoreCase(System.getProperty("stderr.encoding"));
        return new ProgressBarBuilder()
                .setTaskName(label)
                .setInitialMax(total)
                .setUnit(mib ? "MiB" : "KiB", mib ? 1L << 20 : 1L << 10)
                .showSpeed()
                .setUpdateIntervalMillis(200)
                .setStyle(utf8 ? ProgressBarStyle.UNICODE_BLOCK : ProgressBarStyle.ASCII)
                .setConsumer(line)
                .build();
    }

    /** Counts {@code bytes} more done; any thread. */
    void add(long bytes) {
        long d = done.addAndGet(bytes);
        if (bar != null) {
            bar.stepBy(bytes);
        } else if (printer != null && d < total && System.nanoTime() - nextLine >= 0) {
            due(false);
        }
    }

    /** Sets the bytes done from a counter the caller polls (never lower than before); one thread at a time. */
    void set(long bytes) {
        long before = done.get();
        if (bytes > before) {
            add(bytes - before);
        }
    }

    /** Prints a line of the command's own report on {@code out}: above the bar on a terminal, not through it. */
    void println(PrintStream out, String line) {
        if (barLine != null) {
            barLine.above(out, line);
        } else {
            out.println(line);
        }
    }

    /** Queues a line when one is due: monotonic counts, at most one per interval; a stalled job repeats its count. */
    private synchronized void due(boolean stalled) {
        long now = System.nanoTime();
        long d = done.get();
        if (now - nextLine < 0 || d >= total || d < shown || d == shown && !stalled) {
            return;
        }
        shown = d;
        nextLine = now + everyNanos;
        lines.add(line(label, d, total, now - t0, false));
    }

    private void print() {
        long tick = Math.max(everyNanos, TimeUnit.SECONDS.toNanos(1));
        try {
            for (String l; (l = lines.poll(tick, TimeUnit.NANOSECONDS)) != STOP; ) {
                if (l == null) {
                    due(true);
                } else {
                    err.println(l);
                    printed++;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Ends the report: the bar's last state, or a last plain line at 100% after earlier ones. */
    @Override
    public void close() {
        if (bar != null) {
            bar.close();
        }
        if (printer == null) {
            return;
        }
        lines.add(STOP);
        try {
            printer.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        long d = done.get();
        if (printed > 0 && d >= total) {
            err.println(line(label, d, total, System.nanoTime() - t0, true));
        }
    }

    /**
     * Where the library draws the bar: one line of standard error, redrawn in place, that the command's own lines can
     * pass above. Its width is {@link Terminal}'s: the library would otherwise ask jline, which loads a JNI library to
     * find it.
     */
    private static final class BarLine implements ProgressBarConsumer {
        private final PrintStream err;
        private final int width;
        private String last; // guarded by this

        BarLine(PrintStream err, int width) {
            this.err = err;
            this.width = width;
        }

        @Override
        public int getMaxRenderedLength() {
            return width;
        }

        @Override
        public synchronized void accept(String rendered) {
            last = rendered;
            err.print('\r' + rendered);
            err.flush();
        }

        synchronized void above(PrintStream out, String line) {
            err.print("\r" + " ".repeat(width) + "\r");
            err.flush();
            out.println(line);
            out.flush();
            if (last != null) {
                err.print(last);
                err.flush();
            }
        }

        @Override
        public synchronized void close() {
            err.println();
            err.flush();
        }
    }

    /**
     * One plain line: {@code rdma4j LABEL: DONE of TOTAL (P%), RATE, ETA H:MM:SS}, or {@code in H:MM:SS} when finished.
     */
    static String line(String label, long done, long total, long nanos, boolean finished) {
        double seconds = Math.max(nanos, 1) / 1e9;
        double rate = done / seconds;
        int percent = done >= total ? 100 : (int) Math.min(99, done * 100.0 / total);
        String time = finished ? "in " + clock(seconds) : "ETA " + (done > 0 ? clock((total - done) / rate) : "?");
        return String.format(
                Locale.ROOT,
                "rdma4j %s: %s of %s (%d%%), %s, %s",
                label,
                size(done),
                size(total),
                percent,
                rate >= 1e9
                        ? String.format(Locale.ROOT, "%.1f GB/s", rate / 1e9)
                        : String.format(Locale.ROOT, "%.1f MB/s", rate / 1e6),
                time);
    }

    private static String clock(double seconds) {
        long s = (long) Math.ceil(seconds);
        return String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
    }

    static String size(long b) {
        if (b >= 1L << 30) {
            return String.format(Locale.ROOT, "%.1f GiB", b / (double) (1L << 30));
        }
        if (b >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", b / (double) (1L << 20));
        }
        if (b >= 1L << 10) {
            return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
