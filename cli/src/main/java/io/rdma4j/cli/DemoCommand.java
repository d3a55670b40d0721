package io.rdma4j.cli;

import io.rdma4j.Rdma4jException;
import io.rdma4j.libfabric.AddressVector;
import io.rdma4j.libfabric.CompletionQueue;
import io.rdma4j.libfabric.Completions;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.Endpoint;
import io.rdma4j.libfabric.Fabric;
import io.rdma4j.libfabric.Hints;
import io.rdma4j.libfabric.Info;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.libfabric.MemoryRegion;
import io.rdma4j.libfabric.RemoteRegion;
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
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./rdma4j demo}: starts a second process on this machine ({@link DemoTarget}), exchanges endpoint names and the
 * target's region over the child's stdin and stdout, writes 1 GiB to it in 1 MiB RDMA writes with a window of writes
 * in flight, and has the target verify every byte; once over shm and once over tcp (loopback). Prints bandwidth and
 * message rate. The last chunk goes as a writedata only after every other write completed at the initiator: its
 * remote CQ data tells the target that all bytes are in place.
 */
final class DemoCommand implements Command {
    private static final String USAGE = """
            usage: ./rdma4j demo [--size 1g] [--chunk 1m] [--window 32] [--providers shm,tcp]
              --size N        bytes to write (suffix k, m, g; default 1g)
              --chunk N       bytes per RDMA write (default 1m)
              --window N      writes in flight at once (default 32)
              --providers L   libfabric providers to run over, in order (default shm,tcp)
            """;

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String summary() {
        return "two processes, a verified 1 GiB RDMA write between them over shm and tcp (libfabric)";
    }

    /** Hints for a demo provider: tcp is pinned to loopback, so nothing leaves this machine. */
    static Hints hints(String provider) {
        Hints h = Hints.rdm().provider(provider);
        return provider.startsWith("tcp") ? h.sourceAddress("127.0.0.1") : h;
    }

    @Override
    public int run(String[] args) throws Exception {
        long size = 1L << 30;
        long chunk = 1L << 20;
        int window = 32;
        List<String> providers = List.of("shm", "tcp");
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
                case "--window" -> window = Integer.parseInt(v);
                case "--providers" -> providers = List.of(v.split(","));
                default -> throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
            }
        }
        if (chunk <= 0 || chunk % 8 != 0 || size < chunk || size % chunk != 0 || window <= 0) {
            throw new IllegalArgumentException("--size must be a positive multiple of --chunk, --chunk a multiple of 8, --window positive");
        }
        Libfabric.ensureAvailable();
        PrintStream out = System.out;
        out.printf("rdma4j demo: libfabric %s, %s in %s writes, %d in flight, between this process and a child%n",
                Libfabric.versionString(), bytes(size), bytes(chunk), window);
        List<String> results = new ArrayList<>();
        boolean ok = true;
        try (Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(size, 4096);
            for (long off = 0; off < size; off += 8) {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, off, DemoTarget.word(off));
            }
            for (String provider : providers) {
                Result r = runOne(provider, source, chunk, window);
                out.printf("  %-4s %s in %.3f s  %6.2f GB/s  %8.0f writes/s  %s%n", provider, bytes(size), r.seconds,
                        size / r.seconds / 1e9, size / chunk / r.seconds, r.verdict);
                results.add(provider + " " + String.format("%.2f GB/s", size / r.seconds / 1e9));
                ok &= r.verified;
            }
        }
        out.println(ok ? "every byte verified at the target (" + String.join(", ", results) + ")"
                : "VERIFICATION FAILED: see above");
        return ok ? 0 : 1;
    }

    record Result(double seconds, boolean verified, String verdict) {
    }

    static Result runOne(String provider, MemorySegment source, long chunk, int window) throws Exception {
        long size = source.byteSize();
        Info info;
        try (InfoList infos = Libfabric.getinfo(hints(provider))) {
            if (infos.isEmpty()) {
                throw new Rdma4jException("libfabric offers no '" + provider + "' provider for FI_EP_RDM with FI_RMA here: "
                        + "./rdma4j info lists what is usable");
            }
            infos.first();
        }
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                DemoTarget.class.getName(), provider, Long.toString(size));
        pb.environment().put("IPATH_NO_BACKTRACE", "1");
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process child = pb.start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the child is gone; EOF below says so
            }
            lines.add("EOF");
        });
        PrintStream toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
        try (InfoList infos = Libfabric.getinfo(hints(provider));
                Fabric fabric = Fabric.open(infos.first());
                Completions completions = new Completions(64)) {
            info = fabric.info();
            Domain domain = fabric.openDomain();
            CompletionQueue cq = domain.openCompletionQueue(Math.max(1024, window * 2));
            AddressVector av = domain.openAddressVector(2);
            Endpoint ep = domain.openEndpoint(cq, av);
            MemoryRegion mr = domain.register(source);
            HexFormat hex = HexFormat.of();
            byte[] name = hex.parseHex(expect(lines, child, "NAME", null, null));
            RemoteRegion region = RemoteRegion.fromBytes(hex.parseHex(expect(lines, child, "REGION", null, null)));
            if (region.length() < size) {
                throw new Rdma4jException("the demo target registered " + region.length() + " bytes, less than the " + size + " to write");
            }
            long peer = av.insert(name);
            toChild.println("PEER " + hex.formatHex(ep.name()));

            long chunks = size / chunk;
            long posted = 0;
            long completed = 0;
            Progress progress = new Progress(provider + " (" + info.provider() + ")", size);
            long t0 = System.nanoTime();
            while (completed < chunks - 1) {
                while (posted < chunks - 1 && posted - completed < window) {
                    long off = posted * chunk;
                    long rc = ep.write(mr, off, chunk, peer, region, off, posted);
                    if (rc == Endpoint.BACK_PRESSURED) {
                        break;
                    }
                    if (rc != Endpoint.OK) {
                        throw new Rdma4jException("fi_write of chunk " + posted + " failed: " + Libfabric.statusText(rc));
                    }
                    posted++;
                }
                completed += cq.read(completions);
                progress.update(completed * chunk, t0);
                checkAlive(child, lines);
            }
            long lastOff = (chunks - 1) * chunk;
            long rc;
            while ((rc = ep.writeData(mr, lastOff, chunk, chunks, peer, region, lastOff, chunks - 1)) == Endpoint.BACK_PRESSURED) {
                cq.read(completions);
            }
            if (rc != Endpoint.OK) {
                throw new Rdma4jException("fi_writedata of the last chunk failed: " + Libfabric.statusText(rc));
            }
            // keep progressing our side until the target says the last chunk arrived
            expect(lines, child, "ARRIVED", cq, completions);
            double seconds = (System.nanoTime() - t0) / 1e9;
            progress.update(size, t0);
            progress.clear();
            String verdict = expect(lines, child, null, cq, completions);
            boolean verified = verdict.equals("VERIFIED " + size);
            toChild.close();
            child.waitFor(30, TimeUnit.SECONDS);
            return new Result(seconds, verified, verified ? "verified by the target" : "target says: " + verdict);
        } finally {
            toChild.close();
            if (!child.waitFor(5, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
            reader.join(1000);
        }
    }

    /** Waits for the child's next line (starting with {@code key} when given), progressing {@code cq} meanwhile. */
    private static String expect(BlockingQueue<String> lines, Process child, String key, CompletionQueue cq, Completions c)
            throws InterruptedException {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (System.nanoTime() < deadline) {
            String line = cq == null ? lines.poll(100, TimeUnit.MILLISECONDS) : lines.poll();
            if (line == null) {
                if (cq != null) {
                    cq.read(c);
                }
                continue;
            }
            if (line.equals("EOF")) {
                throw new Rdma4jException("the demo target exited" + (child.isAlive() ? "" : " with status " + child.exitValue())
                        + " before saying " + (key == null ? "whether the bytes verified" : key) + "; its errors are printed above");
            }
            if (key == null) {
                return line;
            }
            if (!line.startsWith(key + " ")) {
                throw new Rdma4jException("the demo target said '" + line + "' where " + key + " was expected");
            }
            return line.substring(key.length() + 1);
        }
        throw new Rdma4jException("the demo target did not say " + key + " within 120 s");
    }

    private static void checkAlive(Process child, BlockingQueue<String> lines) {
        if (!child.isAlive() && lines.contains("EOF")) {
            throw new Rdma4jException("the demo target exited with status " + child.exitValue() + " during the transfer; its errors are printed above");
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

    /** A {@code \r} progress line on stderr, redrawn at most ten times a second, only when stderr is a terminal. */
    private static final class Progress {
        private static final boolean TERMINAL = System.console() != null && System.console().isTerminal();
        private final String label;
        private final long total;
        private long lastDraw;

        Progress(String label, long total) {
            this.label = label;
            this.total = total;
        }

        void update(long done, long t0) {
            long now = System.nanoTime();
            if (!TERMINAL || now - lastDraw < 100_000_000L && done < total) {
                return;
            }
            lastDraw = now;
            int width = 30;
            int filled = (int) (width * done / total);
            double gbps = done / Math.max(1e-9, (now - t0) / 1e9) / 1e9;
            System.err.printf("\r  %-22s [%s%s] %3d%%  %5.2f GB/s", label, "#".repeat(filled), ".".repeat(width - filled),
                    100 * done / total, gbps);
            System.err.flush();
        }

        void clear() {
            if (!TERMINAL) {
                return;
            }
            System.err.print("\r" + " ".repeat(80) + "\r");
            System.err.flush();
        }
    }
}
