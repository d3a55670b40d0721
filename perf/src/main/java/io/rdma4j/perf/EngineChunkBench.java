package io.rdma4j.perf;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's own cost per chunk, over {@link NoopEngineBackend} (nothing moves): a 64 MiB write cut into 16,384
 * chunks of 4 KiB over 4 lanes, reported per chunk ({@code @OperationsPerInvocation}). Run with {@code -prof gc}:
 * {@code gc.alloc.rate.norm} per chunk is the transfer's fixed allocations (future, stripes, address arrays) divided by
 * 16,384; the chunk path itself allocates nothing. Baseline in the same run: {@link #oneChunkTransfer}, a 4 KiB write
 * (one chunk), i.e. the per-transfer cost the per-chunk number amortises.
 *
 * <p>{@link #metrics} builds the writing engine without a meter registry ({@code off}: what the data path costs with
 * metrics off), with a {@code SimpleMeterRegistry}, or with a {@code PrometheusMeterRegistry}.
 *
 * <pre>./rdma4j bench jmh EngineChunkBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class EngineChunkBench {
    static final long CHUNK = 4096;
    static final long BIG = 64L << 20;
    static final int CHUNKS = (int) (BIG / CHUNK);

    /** {@code off}, {@code simple} or {@code prometheus}: the registry the writing engine publishes its meters in. */
    @Param({"off", "simple", "prometheus"})
    public String metrics;

    Arena arena;
    MeterRegistry registry;
    TransferEngine a;
    TransferEngine b;
    LocalBuffer src;
    RemoteBuffer dst;

    @Setup(Level.Trial)
    public void open() {
        arena = Arena.ofShared();
        long pid = ProcessHandle.current().pid();
        registry = switch (metrics) {
            case "off" -> null;
            case "simple" -> new SimpleMeterRegistry();
            case "prometheus" -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            default -> throw new IllegalArgumentException("metrics: off, simple or prometheus, not " + metrics);
        };
        a = TransferEngine.builder()
                .name("chunkbench-a-" + pid)
                .meterRegistry(registry)
                .backend("noop")
                .lanesPerNic(4)
                .chunkSize(CHUNK)
                .queueDepth(256)
                .busySpin(true)
                .build();
        b = TransferEngine.builder()
                .name("chunkbench-b-" + pid)
                .backend("noop")
                .lanesPerNic(4)
                .chunkSize(CHUNK)
                .build();
        b.publish("sink", b.register(arena.allocate(BIG, 4096)), Access.anyPeer());
        src = a.register(arena.allocate(BIG, 4096));
        dst = a.peer(b.name()).buffer("sink");
    }

    @TearDown(Level.Trial)
    public void close() {
        a.close();
        b.close();
        arena.close();
        if (registry != null) {
            registry.close();
        }
    }

    /** One 64 MiB write of 16,384 chunks striped over 4 lanes; time and allocation per chunk. */
    @Benchmark
    @OperationsPerInvocation(CHUNKS)
    public long perChunk() {
        return a.write(src, 0, dst, 0, BIG, TransferOptions.DEFAULT).join().bytes();
    }

    /** One 4 KiB write: the fixed cost of a transfer (validation, plan, future), one chunk. */
    @Benchmark
    public long oneChunkTransfer() {
        return a.write(src, 0, dst, 0, CHUNK, TransferOptions.DEFAULT).join().bytes();
    }
}
