package io.rdma4j.perf;

import io.rdma4j.nvmeof.Target;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SPDK's own NVMe-oF initiator benchmark, {@code spdk_nvme_perf}, run against the target {@code bench nvme} measures:
 * one worker pinned to {@code coreMask}, without hugepages, with software latency tracking ({@code -L}) for
 * percentiles. Each run has a time limit and is killed past it.
 */
final class SpdkPerf {
    /** The "Total" row: IOPS, MiB/s, average, min and max latency in microseconds. */
    private static final Pattern TOTAL =
            Pattern.compile("(?m)^Total\\s*:\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s+([0-9.]+)\\s*$");
    /** A latency cutoff line of the -L summary: " 50.00000% : 11.234us". */
    private static final Pattern CUTOFF = Pattern.compile("(?m)^\\s*([0-9.]+)% :\\s+([0-9.]+)us\\s*$");

    private final SpdkBuild build;
    private final String coreMask;

    SpdkPerf(SpdkBuild build, String coreMask) {
        this.build = build;
        this.coreMask = coreMask;
    }

    /**
     * What spdk_nvme_perf reported.
     *
     * @param p50Us the 50th percentile, NaN when the output had no latency summary
     * @param p99Us the 99th percentile, NaN when the output had no latency summary
     */
    record Report(double iops, double averageUs, double minUs, double maxUs, double p50Us, double p99Us) {}

    /**
     * Runs one workload for whole seconds after a warm-up of whole seconds.
     *
     * @param pattern spdk_nvme_perf's {@code -w}: read, write, randread or randwrite
     * @throws IOException when it fails, reports nothing, or runs past its limit (the message carries its output)
     */
    Report run(Target target, String nqn, long nsid, String pattern, int size, int qd, int seconds, int warmup)
            throws IOException, InterruptedException {
        String trid = String.format(
                Locale.ROOT,
                "trtype:TCP adrfam:IPv4 traddr:%s trsvcid:%d subnqn:%s ns:%d",
                target.host(),
                target.port(),
                nqn,
                nsid);
        List<String> cmd = List.of(
                build.perf().toString(),
                "--no-huge",
                "-s",
                "512",
                "-c",
                coreMask,
                "-q",
                Integer.toString(qd),
                "-o",
                Integer.toString(size),
                "-w",
                pattern,
                "-t",
                Integer.toString(seconds),
                "-a",
                Integer.toString(warmup),
                "-L",
                "-r",
                trid);
        Path out = Files.createTempFile("rdma4j-spdk_nvme_perf-", ".out");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        try {
            long limit = seconds + warmup + 60L;
            if (!p.waitFor(limit, TimeUnit.SECONDS)) {
                throw new IOException("spdk_nvme_perf ran past " + limit + " s and was killed (" + String.join(" ", cmd)
                        + "); it said: " + tail(Files.readString(out, StandardCharsets.UTF_8)));
            }
            String said = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IOException("spdk_nvme_perf exited " + p.exitValue() + " (" + String.join(" ", cmd)
                        + "); it said: " + tail(said));
            }
            return parse(said);
        } finally {
            p.destroyForcibly();
            Files.deleteIfExists(out);
        }
    }

    /**
     * {@return the totals and percentiles in spdk_nvme_perf's output}
     *
     * @throws IOException when it has no Total row
     */
    static Report parse(String said) throws IOException {
        Matcher t = TOTAL.matcher(said);
        if (!t.find()) {
            throw new IOException("spdk_nvme_perf printed no Total row (did every I/O fail?); it said: " + tail(said));
        }
        double p50 = Double.NaN, p99 = Double.NaN;
        Matcher c = CUTOFF.matcher(said);
        while (c.find()) {
            double pct = Double.parseDouble(c.group(1));
            double us = Double.parseDouble(c.group(2));
            if (pct == 50.0) {
                p50 = us;
            } else if (pct == 99.0) {
                p99 = us;
            }
        }
        return new Report(
                Double.parseDouble(t.group(1)),
                Double.parseDouble(t.group(3)),
                Double.parseDouble(t.group(4)),
                Double.parseDouble(t.group(5)),
                p50,
                p99);
    }

    private static String tail(String s) {
        s = s.strip();
        return s.length() > 3000 ? "..." + s.substring(s.length() - 3000) : s;
    }
}
