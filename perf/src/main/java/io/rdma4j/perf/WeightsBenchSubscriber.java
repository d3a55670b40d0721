package io.rdma4j.perf;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.Security;
import io.rdma4j.weights.DType;
import io.rdma4j.weights.Shard;
import io.rdma4j.weights.Tensor;
import io.rdma4j.weights.WeightSubscriber;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * A subscriber process of {@code ./rdma4j bench weights}, and the layout both sides share: {@link #TENSORS} BF16
 * tensors of {@code [rows, 4096]}; one 8-byte word per 4 KiB of each full tensor carries the version (the sampled
 * check: every 4 KiB of a subscriber's part is a distinct run or page of what moved). Args: directory, provider, engine
 * name, publishers (comma-separated), rows, part ({@code full} or {@code dim:index:parts}), and optionally how many
 * buffers to keep ({@code 2}, the default, or {@code 1}). It says {@code JOINED}, then {@code OK v} or {@code BAD v
 * tensor offset} for each version, and exits when its stdin closes.
 */
public final class WeightsBenchSubscriber {
    static final int TENSORS = 4;
    static final long COLUMNS = 4096;
    static final DType TYPE = DType.BF16;
    static final long ROW_BYTES = COLUMNS * 2;
    static final long SAMPLE = 4096;

    private WeightsBenchSubscriber() {}

    static String name(int t) {
        return "layers." + t + ".weight";
    }

    /** {@return the rows of each tensor for about {@code size} bytes in all: a multiple of 4, for the splits} */
    static long rows(long size) {
        return Math.max(4, size / TENSORS / ROW_BYTES) & ~3L;
    }

    static long word(long version, int t, long offset) {
        long x = (offset + ((long) t << 44)) * 0x9E3779B97F4A7C15L + version * 0xBF58476D1CE4E5B9L;
        return x ^ (x >>> 31);
    }

    static Shard part(String spec, long rows) {
        if (spec.equals("full")) {
            return Shard.FULL;
        }
        String[] p = spec.split(":");
        int dim = Integer.parseInt(p[0]);
        return Shard.split(dim, dim == 0 ? rows : COLUMNS, Integer.parseInt(p[1]), Integer.parseInt(p[2]));
    }

    interface Sampled {
        void word(long partOffset, long fullOffset);
    }

    /** Calls {@code f} for each sampled word of {@code shard} of a tensor of {@code rows} rows. */
    static void visit(Shard shard, long rows, Sampled f) {
        long[][] box = shard.box(new long[] {rows, COLUMNS});
        long len = (box[1][1] - box[0][1]) * 2;
        long at = 0;
        for (long r = box[0][0]; r < box[1][0]; r++) {
            long start = r * ROW_BYTES + box[0][1] * 2;
            for (long b = (start + SAMPLE - 1) / SAMPLE * SAMPLE; b + 8 <= start + len; b += SAMPLE) {
                f.word(at + b - start, b);
            }
            at += len;
        }
    }

    static void fill(MemorySegment m, long v, int t, Shard held, long rows) {
        visit(held, rows, (at, full) -> m.set(ValueLayout.JAVA_LONG_UNALIGNED, at, word(v, t, full)));
    }

    static long check(MemorySegment m, long v, int t, Shard need, long rows) {
        long[] bad = {-1};
        visit(need, rows, (at, full) -> {
            if (bad[0] < 0 && m.get(ValueLayout.JAVA_LONG_UNALIGNED, at) != word(v, t, full)) {
                bad[0] = at;
            }
        });
        return bad[0];
    }

    /**
     * A bench engine (publisher or subscriber) on {@code provider}, with the progress threads the other benches take
     * ({@code -Drdma4j.bench.progressThreads}, 1 by default as the engine's own).
     */
    static TransferEngine engine(String name, String provider, String directory) {
        TransferEngine.Builder b = TransferEngine.builder()
                .name(name)
                .backend("libfabric")
                .provider(provider)
                .lanesPerNic(2)
                .progressThreads(EngineWriteRun.progressThreads())
                .directory(directory, Security.none());
        return provider.startsWith("tcp") ? b.nicFilter("lo").build() : b.build();
    }

    public static void main(String[] args) throws Exception {
        long rows = Long.parseLong(args[4]);
        Shard need = part(args[5], rows);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Thread.ofPlatform().daemon().start(() -> {
            try {
                while (in.readLine() != null) {
                    // the bench says nothing; EOF means it is done or gone
                }
            } catch (IOException e) {
                // same as EOF
            }
            Runtime.getRuntime().halt(0);
        });
        try (TransferEngine engine = engine(args[2], args[1], args[0]);
                WeightSubscriber sub = WeightSubscriber.builder(engine, List.of(args[3].split(",")))
                        .needs(n -> need)
                        .doubleBuffer(args.length <= 6 || !args[6].equals("1"))
                        .build()) {
            System.out.println("JOINED");
            long failedForwards = 0;
            for (long seen = 0; ; ) {
                try (WeightSubscriber.Lease lease = sub.awaitVersion(seen + 1, Duration.ofSeconds(600))) {
                    long v = lease.version();
                    String verdict = "OK " + v;
                    for (Tensor x : lease.tensors().tensors()) {
                        int t = Integer.parseInt(x.name().split("\\.")[1]);
                        long bad = check(x.host(), v, t, need, rows);
                        if (bad >= 0) {
                            verdict = "BAD " + v + " " + x.name() + " " + bad;
                            break;
                        }
                    }
                    seen = v;
                    lease.close();
                    if (sub.relayFailures() > failedForwards) {
                        failedForwards = sub.relayFailures();
                        // the bench reads stdout; this goes to its stderr, which the bench's own output shows
                        System.err.printf(
                                "%s: %d forwards failed by version %d; the last: %s%n",
                                args[2], failedForwards, v, sub.lastRelayFailure());
                    }
                    System.out.println(verdict);
                }
            }
        }
    }
}
