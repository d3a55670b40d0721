package io.rdma4j.cli;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.Rdma4jException;
import io.rdma4j.engine.HostMemory;
import io.rdma4j.engine.LaneStats;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferResult;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./rdma4j demo}: the transfer engine end to end. Starts a rendezvous directory on loopback and a second process
 * on this machine ({@link DemoTarget}) running its own engine; each engine announces itself, the target publishes a 1
 * GiB buffer, and this process resolves it by name, prints the engine's plan, writes 1 GiB striped across 4 lanes with
 * a completion-gated notification carrying a CRC32C, and shows a progress bar. The target waits for the tag, which
 * arrives only after every byte landed, and checks every byte itself. Once per provider (shm, then tcp over loopback),
 * with bandwidth and bytes per lane.
 */
final class DemoCommand implements Command {
    private static final String USAGE = """
            usage: ./rdma4j demo [--size 1g] [--lanes 4] [--chunk 1m] [--providers shm,tcp] [--rendezvous HOST:PORT,...]
              --size N        bytes to write (suffix k, m, g; default 1g)
              --lanes N       engine lanes (libfabric endpoints) on each side (default 4)
              --chunk N       chunk size the engine stripes in (default 1m)
              --providers L   libfabric providers to run over, in order (default shm,tcp; tcp stays on loopback)
              --rendezvous L  use these standalone directories (./rdma4j rendezvous --etcd ...), failing over
                              between them, instead of starting one on loopback
              --no-progress   no progress on stderr (a bar on a terminal, else a line every --progress-every 10 s)
            """;

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String summary() {
        return "two processes, 1 GiB written by the transfer engine across 4 lanes and verified (shm, tcp)";
    }

    @Override
    public int run(String[] arguments) throws Exception {
        List<String> rest = new ArrayList<>(List.of(arguments));
        ProgressOptions progress = ProgressOptions.take(rest);
        String[] args = rest.toArray(String[]::new);
        long size = 1L << 30;
        long chunk = 1L << 20;
        int lanes = 4;
        List<String> providers = List.of("shm", "tcp");
        String rendezvous = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(USAGE);
                return 0;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value\n" + USAGE);
            }
            String v = args[++i];
            switch (a) {
                case "--size" -> size = parseSize(v);
                case "--chunk" -> chunk = parseSize(v);
                case "--lanes", "--window" -> lanes = Integer.parseInt(v);
                case "--providers" -> providers = List.of(v.split(","));
                case "--rendezvous" -> rendezvous = v;
                default -> throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
            }
        }
        if (chunk < 4096 || chunk % 8 != 0 || size < 8 || size % 8 != 0 || lanes < 1 || lanes > 16) {
            throw new IllegalArgumentException(
                    "--size must be a positive multiple of 8, --chunk at least 4k and a multiple of 8, --lanes 1..16");
        }
        Libfabric.ensureAvailable();
        PrintStream out = System.out;
        out.printf(
                "rdma4j demo: transfer engine on libfabric %s, %s in %s chunks across %d lanes, to a second process found through a rendezvous directory%n",
                Libfabric.versionString(), bytes(size), bytes(chunk), lanes);
        List<String> results = new ArrayList<>();
        boolean ok = true;
        try (Arena arena = Arena.ofShared()) {
            // both sides map their buffer on huge pages, faulted in: the first write into fresh 4 KiB pages paid for
            // each page (on a 2-vCPU VM: 4.5-5 s for 1 GiB's first write, 0.2 s repeated, 0.3 s on huge pages)
            MemorySegment source = HostMemory.allocate(arena, size);
            for (long off = 0; off < size; off += 8) {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, off, DemoTarget.word(off));
            }
            long huge = HostMemory.hugePageBytes(source);
            out.printf(
                    "  source: %s mapped and faulted in before the clock starts, %s%n",
                    bytes(size),
                    huge < 0
                            ? "its page sizes unknown (/proc/self/smaps unreadable)"
                            : huge == 0
                                    ? "on base pages (the kernel gave no transparent huge pages)"
                                    : bytes(huge) + " of it on " + bytes(HostMemory.hugePageSize()) + " pages");
            for (String provider : providers) {
                Result r = runOne(provider, source, chunk, lanes, rendezvous, out, progress);
                out.printf(
                        "  %-4s %s in %.3f s  %6.2f GB/s  %s%n",
                        provider, bytes(size), r.seconds, size / r.seconds / 1e9, r.verdict);
                results.add(provider + " " + String.format("%.2f GB/s", size / r.seconds / 1e9));
                ok &= r.verified;
            }
        }
        out.println(
                ok
                        ? "every byte verified at the target (" + String.join(", ", results) + ")"
                        : "VERIFICATION FAILED: see above");
        return ok ? 0 : 1;
    }

    record Result(double seconds, boolean verified, String verdict) {}

    static Result runOne(String provider, MemorySegment source, long chunk, int lanes) throws Exception {
        return runOne(
                provider,
                source,
                chunk,
                lanes,
                null,
                new PrintStream(java.io.OutputStream.nullOutputStream()),
                ProgressOptions.OFF);
    }

    /**
     * One run: a directory on loopback (or the given ones), the target process, this engine; returns time and the
     * target's verdict.
     *
     * @param rendezvous standalone directories {@code HOST:PORT,...}, or null to start one on loopback
     * @param progress how to show the write's progress on stderr
     */
    static Result runOne(
            String provider,
            MemorySegment source,
            long chunk,
            int lanes,
            String rendezvous,
            PrintStream out,
            ProgressOptions progress)
            throws Exception {
        long size = source.byteSize();
        try (DirectoryServer local =
                rendezvous == null ? DirectoryServer.builder().port(0).start() : null) {
            String directoryTarget = local == null ? rendezvous : local.target();
            ProcessBuilder pb = new ProcessBuilder(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED",
                    "--sun-misc-unsafe-memory-access=allow",
                    "-cp",
                    System.getProperty("java.class.path"),
                    DemoTarget.class.getName(),
                    provider,
                    Long.toString(size),
                    directoryTarget,
                    Integer.toString(lanes),
                    Long.toString(chunk));
            pb.environment().put("IPATH_NO_BACKTRACE", "1");
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            Process child = pb.start();
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader = Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (IOException e) {
                    // the child is gone; EOF below says so
                }
                lines.add("EOF");
            });
            PrintStream toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
            try (TransferEngine engine =
                    engine("demo-" + ProcessHandle.current().pid(), provider, directoryTarget, lanes, chunk)) {
                String target = expect(lines, child, "READY");
                RemoteBuffer landing = engine.peer(target).buffer("landing");
                try (LocalBuffer src = engine.register(source)) {
                    Plan plan = engine.explain(src, landing);
                    // the plan's reason repeats where the lanes come from; print the engine line without it
                    String d = engine.description();
                    out.printf("%n  %s: %s%n", provider, d.contains("; ") ? d.substring(0, d.indexOf("; ")) : d);
                    for (String l : plan.toText().split("\n")) {
                        out.println("    " + l);
                    }
                    long[] before = engine.laneStats().stream()
                            .mapToLong(LaneStats::bytes)
                            .toArray();
                    TransferResult result;
                    String arrived;
                    try (Progress p = Progress.start("demo " + provider, size, progress)) {
                        Transfer t = engine.write(
                                src,
                                landing,
                                TransferOptions.tag(DemoTarget.TAG).withCrc32c());
                        while (!t.future().isDone()) {
                            p.set(t.bytesCompleted());
                            Thread.sleep(20);
                            checkAlive(child, lines);
                        }
                        result = t.join();
                        arrived = expect(lines, child, "ARRIVED");
                        p.set(size);
                    }
                    // the transfer's own time: from posting to the tag landing, checksums outside it
                    double seconds = result.nanos() / 1e9;
                    StringBuilder perLane = new StringBuilder();
                    List<LaneStats> after = engine.laneStats();
                    for (LaneStats ls : after) {
                        long moved = ls.bytes() - before[ls.lane()];
                        if (moved > 0) {
                            perLane.append(perLane.isEmpty() ? "" : ", ")
                                    .append("lane ")
                                    .append(ls.lane())
                                    .append(' ')
                                    .append(bytes(moved));
                        }
                    }
                    out.printf(
                            "    per lane: %s; %d chunk(s) retried; tag arrived after the data (checksum %s)%n",
                            perLane, result.retries(), arrived.toLowerCase(java.util.Locale.ROOT));
                    String verdict = expect(lines, child, null);
                    boolean verified = verdict.equals("VERIFIED " + size);
                    return new Result(
                            seconds, verified, verified ? "verified by the target" : "target says: " + verdict);
                }
            } finally {
                toChild.close();
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
                reader.join(1000);
            }
        }
    }

    /** An engine on {@code provider}; tcp is kept on the loopback interface so nothing leaves this machine. */
    static TransferEngine engine(String name, String provider, String directory, int lanes, long chunk) {
        return engine(name, provider, directory, lanes, chunk, null);
    }

    /**
     * As {@link #engine(String, String, String, int, long)}, publishing its meters in {@code registry} (or not: null).
     */
    static TransferEngine engine(
            String name, String provider, String directory, int lanes, long chunk, MeterRegistry registry) {
        TransferEngine.Builder b = TransferEngine.builder()
                .meterRegistry(registry)
                .name(name)
                .backend("libfabric")
                .provider(provider)
                .lanesPerNic(lanes)
                .chunkSize(chunk)
                .directory(directory, Security.none());
        if (provider.startsWith("tcp")) {
            b.nicFilter("lo");
        }
        return b.build();
    }

    /** Waits for the child's next line (starting with {@code key} when given). */
    private static String expect(BlockingQueue<String> lines, Process child, String key) throws InterruptedException {
        String line = lines.poll(300, TimeUnit.SECONDS);
        if (line == null) {
            throw new Rdma4jException(
                    "the demo target did not say " + (key == null ? "its verdict" : key) + " within 300 s");
        }
        if (line.equals("EOF")) {
            throw new Rdma4jException("the demo target exited"
                    + (child.isAlive() ? "" : " with status " + child.exitValue()) + " before saying "
                    + (key == null ? "whether the bytes verified" : key) + "; its errors are printed above");
        }
        if (key == null) {
            return line;
        }
        if (!line.startsWith(key + " ")) {
            throw new Rdma4jException("the demo target said '" + line + "' where " + key + " was expected");
        }
        return line.substring(key.length() + 1);
    }

    private static void checkAlive(Process child, BlockingQueue<String> lines) {
        if (!child.isAlive() && lines.contains("EOF")) {
            throw new Rdma4jException("the demo target exited with status " + child.exitValue()
                    + " during the transfer; its errors are printed above");
        }
    }

    static long parseSize(String s) {
        String t = s.trim().toLowerCase();
        long mult = 1;
        char last = t.charAt(t.length() - 1);
        if (last == 'k' || last == 'm' || last == 'g') {
            mult = last == 'k' ? 1L << 10 : last == 'm' ? 1L << 20 : 1L << 30;
            t = t.substring(0, t.length() - 1);
        }
        return Long.parseLong(t) * mult;
    }

    static String bytes(long n) {
        if (n >= 1L << 30 && n % (1L << 30) == 0) {
            return (n >> 30) + " GiB";
        }
        if (n >= 1L << 20 && n % (1L << 20) == 0) {
            return (n >> 20) + " MiB";
        }
        if (n >= 1L << 10 && n % (1L << 10) == 0) {
            return (n >> 10) + " KiB";
        }
        return n + " B";
    }
}
