package io.rdma4j.perf;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_LOCAL_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_INLINE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;

import io.rdma4j.ibverbs.CompletionQueue;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.QpInfo;
import io.rdma4j.ibverbs.QpInitAttr;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.SendWr;
import io.rdma4j.ibverbs.Verbs;
import io.rdma4j.ibverbs.WorkCompletions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * RDMA write bandwidth and latency of the Java verbs binding next to perftest's {@code ib_write_bw} and
 * {@code ib_write_lat} on the same device, in the same run, printed as ratios. Both sides run on one device (loopback),
 * as perftest's client and server do here. On Soft-RoCE in the test VM the numbers are emulation speeds: only the ratio
 * means something.
 *
 * <p>{@code ./rdma4j bench ibverbs-write [DEVICE] [SIZE] [ITERATIONS]}, in the guest through {@code scripts/testvm test
 * perf}.
 */
final class IbverbsWriteRun implements BenchRun {
    private static final int ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    private static final java.lang.invoke.VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    @Override
    public String name() {
        return "ibverbs-write";
    }

    @Override
    public String summary() {
        return "Java RDMA write bandwidth/latency vs ib_write_bw/ib_write_lat on one verbs device (test VM: rxe0)";
    }

    @Override
    public int run(String[] args) throws Exception {
        String dev = args.length > 0 ? args[0] : "rxe0";
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 65536;
        int iters = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int latIters = 1000;
        Integer gid = roceGid(name(), dev);
        if (gid == null) {
            return 2;
        }
        double[] perfBw = perftest("ib_write_bw", dev, gid, size, iters, 18515, 3);
        double[] perfLat = perftest("ib_write_lat", dev, gid, 8, latIters, 18516, 4);
        javaBandwidth(dev, gid, size, Math.max(16, iters / 4)); // JIT warm-up, not measured (perftest is native code)
        double javaBw = javaBandwidth(dev, gid, size, iters);
        double[] javaLat = javaLatency(dev, gid, latIters);
        System.out.printf("%nibverbs-write on %s (same device, same run)%n", dev);
        System.out.printf("  %-36s %12s %12s %8s%n", "", "Java", "perftest", "ratio");
        System.out.printf(
                "  %-36s %12.1f %12.1f %8.2f%n",
                "write bw " + size + " B, MB/s (2^20)", javaBw, perfBw[0], javaBw / perfBw[0]);
        System.out.printf(
                "  %-36s %12.2f %12.2f %8.2f%n",
                "write lat 8 B typical, us (one-way)", javaLat[0], perfLat[0], javaLat[0] / perfLat[0]);
        System.out.printf(
                "  %-36s %12.2f %12.2f %8.2f%n",
                "write lat 8 B average, us (one-way)", javaLat[1], perfLat[1], javaLat[1] / perfLat[1]);
        System.out.println("  (bandwidth ratio > 1: Java faster; latency ratio < 1: Java faster)");
        return 0;
    }

    /**
     * {@return the RoCE v2 IPv4 GID index of {@code dev}'s port 1 (-1 for none), or null, having said why, when there
     * is no such device here}
     */
    static Integer roceGid(String bench, String dev) {
        if (!Verbs.isAvailable() || !Verbs.deviceNames().contains(dev)) {
            System.out.println(bench + ": no device " + dev + " here (found "
                    + (Verbs.isAvailable() ? Verbs.deviceNames() : "no libibverbs")
                    + "); run it in the test VM: scripts/testvm test perf");
            return null;
        }
        try (Context ctx = Verbs.openDevice(dev)) {
            return ctx.findRoceV2Ipv4GidIndex(1);
        }
    }

    /**
     * Runs perftest's server and client on {@code dev}; returns {BW average} or {t_typical, t_avg} from the client's
     * result line.
     */
    static double[] perftest(String tool, String dev, int gid, int size, int iters, int port, int column)
            throws IOException, InterruptedException {
        return perftest(tool, dev, gid, size, iters, port, column, new MachineCpu[2]);
    }

    /**
     * As {@link #perftest(String, String, int, int, int, int, int)}, with the machine's CPU counters from the client's
     * start to its exit (its start-up and connection included) left in {@code span[0]} and {@code span[1]}.
     */
    static double[] perftest(
            String tool, String dev, int gid, int size, int iters, int port, int column, MachineCpu[] span)
            throws IOException, InterruptedException {
        // under emulation perftest's cycle clock sometimes measures no time at all and prints "inf": run it again
        for (int attempt = 1; ; attempt++) {
            double[] r = perftestOnce(tool, dev, gid, size, iters, port, column, span);
            if (Arrays.stream(r).allMatch(x -> Double.isFinite(x) && x > 0) || attempt == 3) {
                return r;
            }
            System.out.println(tool + " printed " + Arrays.toString(r) + ": running it again");
        }
    }

    private static double[] perftestOnce(
            String tool, String dev, int gid, int size, int iters, int port, int column, MachineCpu[] span)
            throws IOException, InterruptedException {
        List<String> common = new ArrayList<>(List.of(
                tool,
                "-d",
                dev,
                "-s",
                Integer.toString(size),
                "-n",
                Integer.toString(iters),
                "-p",
                Integer.toString(port),
                "-F"));
        if (gid >= 0) {
            common.addAll(List.of("-x", Integer.toString(gid)));
        }
        Process server = new ProcessBuilder(common)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            Thread.sleep(3000); // the server must listen before the client connects
            List<String> client = new ArrayList<>(common);
            client.add("127.0.0.1");
            span[0] = MachineCpu.now();
            Process c = new ProcessBuilder(client).redirectErrorStream(true).start();
            List<String> lines = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))
                    .lines()
                    .toList();
            if (!c.waitFor(300, TimeUnit.SECONDS) || c.exitValue() != 0) {
                throw new IllegalStateException(tool + " failed:\n" + String.join("\n", lines));
            }
            span[1] = MachineCpu.now();
            for (String l : lines) {
                String[] f = l.trim().split("\\s+");
                if (f.length > column && f[0].equals(Integer.toString(size)) && f[1].equals(Integer.toString(iters))) {
                    return column == 3 ? new double[] {number(f[3])} : new double[] {number(f[4]), number(f[5])};
                }
            }
            throw new IllegalStateException("no result line in " + tool + " output:\n" + String.join("\n", lines));
        } finally {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** A figure perftest printed: a number, or {@code inf}/{@code nan} when its clock failed. */
    private static double number(String s) {
        return switch (s.toLowerCase(java.util.Locale.ROOT)) {
            case "inf", "+inf" -> Double.POSITIVE_INFINITY;
            case "nan", "-nan" -> Double.NaN;
            default -> Double.parseDouble(s);
        };
    }

    private static void connect(QueuePair a, QueuePair b, int gid) {
        QpInfo ia = Verbs.localQpInfo(a, 1, gid);
        QpInfo ib = Verbs.localQpInfo(b, 1, gid);
        Verbs.connectRc(a, ib, 1, gid, ACCESS);
        Verbs.connectRc(b, ia, 1, gid, ACCESS);
    }

    /**
     * Like ib_write_bw: {@code iters} writes of {@code size} bytes, up to 128 in flight, every 16th signaled; MB/s with
     * MB = 2^20.
     */
    static double javaBandwidth(String dev, int gid, int size, int iters) {
        final int depth = 128;
        final int every = 16;
        try (Context ctx = Verbs.openDevice(dev);
                Arena arena = Arena.ofShared();
                SendWr wr = new SendWr(1);
                WorkCompletions wcs = new WorkCompletions(16)) {
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(depth * 2);
            QueuePair a = pd.createQp(QpInitAttr.rc(cq).maxSendWr(depth + 1));
            QueuePair b = pd.createQp(QpInitAttr.rc(cq));
            connect(a, b, gid);
            MemoryRegion src = pd.register(arena.allocate(size, 4096), ACCESS);
            MemoryRegion dst = pd.register(arena.allocate(size, 4096), ACCESS);
            wr.write(0, src, 0, size, dst.address(), dst.rkey(), 0);
            long start = System.nanoTime();
            int posted = 0;
            int completed = 0;
            while (completed < iters) {
                while (posted < iters && posted - completed < depth) {
                    boolean signal = (posted + 1) % every == 0 || posted == iters - 1;
                    int rc = a.postSend(wr.wrId(posted).flags(signal ? IBV_SEND_SIGNALED : 0));
                    if (rc != 0) {
                        throw new IllegalStateException("ibv_post_send: " + rc);
                    }
                    posted++;
                }
                int n = cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    wcs.throwIfError(i);
                    completed = (int) wcs.wrId(i) + 1;
                }
            }
            double secs = (System.nanoTime() - start) / 1e9;
            src.close();
            dst.close();
            return (double) size * iters / secs / (1 << 20);
        }
    }

    /**
     * Like ib_write_lat: 8-byte write ping-pong between two queue pairs, each side spinning on its buffer; {typical,
     * average} one-way in us.
     */
    static double[] javaLatency(String dev, int gid, int iters) throws InterruptedException {
        try (Context ctx = Verbs.openDevice(dev);
                Arena arena = Arena.ofShared()) {
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cqa = ctx.createCq(64);
            CompletionQueue cqb = ctx.createCq(64);
            QueuePair a = pd.createQp(QpInitAttr.rc(cqa).maxInlineData(64));
            QueuePair b = pd.createQp(QpInitAttr.rc(cqb).maxInlineData(64));
            connect(a, b, gid);
            MemoryRegion ma = pd.register(arena.allocate(4096, 4096), ACCESS);
            MemoryRegion mb = pd.register(arena.allocate(4096, 4096), ACCESS);
            long[] rtt = new long[iters];
            int warm = 500; // JIT warm-up round, not measured (perftest is native code)
            Thread pong = new Thread(() -> {
                pingPong(b, cqb, mb, ma, 1, warm, null);
                pingPong(b, cqb, mb, ma, warm + 1, iters, null);
            });
            pong.start();
            pingPong(a, cqa, ma, mb, 1, warm, new long[warm]);
            pingPong(a, cqa, ma, mb, warm + 1, iters, rtt);
            pong.join();
            ma.close();
            mb.close();
            long[] sorted = rtt.clone();
            Arrays.sort(sorted);
            double typical = sorted[iters / 2] / 2e3;
            double avg = Arrays.stream(rtt).average().orElse(0) / 2e3;
            return new double[] {typical, avg};
        }
    }

    /**
     * The initiator ({@code rtt != null}) writes i and waits for i to come back; the responder waits for i and writes
     * it back.
     */
    private static void pingPong(
            QueuePair qp, CompletionQueue cq, MemoryRegion mine, MemoryRegion peer, int first, int iters, long[] rtt) {
        MemorySegment in = mine.segment();
        MemorySegment out = mine.segment().asSlice(2048, 8);
        try (SendWr wr = new SendWr(1);
                WorkCompletions wcs = new WorkCompletions(8)) {
            wr.wrId(0).opcode(IBV_WR_RDMA_WRITE).sge(mine, 2048, 8).rdma(peer.address(), peer.rkey());
            for (int i = first; i < first + iters; i++) {
                long t0 = System.nanoTime();
                if (rtt == null) {
                    while ((long) LONG.getVolatile(in, 0L) != i) {
                        Thread.onSpinWait();
                    }
                }
                out.set(ValueLayout.JAVA_LONG, 0, i);
                int rc = qp.postSend(wr.flags(IBV_SEND_INLINE | (i % 16 == 0 ? IBV_SEND_SIGNALED : 0)));
                if (rc != 0) {
                    throw new IllegalStateException("ibv_post_send: " + rc);
                }
                if (rtt != null) {
                    while ((long) LONG.getVolatile(in, 0L) != i) {
                        Thread.onSpinWait();
                    }
                    rtt[i - first] = System.nanoTime() - t0;
                }
                if (i % 16 == 0) {
                    while (cq.poll(wcs) == 0) {
                        Thread.onSpinWait();
                    }
                    wcs.throwIfError(0);
                }
            }
        }
    }
}
