package io.rdma4j.perf;

import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.HostIdentity;
import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.PolledQueue;
import io.rdma4j.nvmeof.Target;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * The asynchronous API's cost per I/O: a {@link PolledQueue} driven from the benchmark thread over NVMe/TCP on loopback
 * against {@link NvmeTcpLoopTarget}, one command at a time ({@code read1}, {@code write1}) and 32 submitted then polled
 * to completion ({@code read32}, {@code write32}, per I/O). With {@code -prof gc}, {@code gc.alloc.rate.norm} is what
 * one I/O allocates, every thread of the JVM included (the loopback peer allocates nothing per command); compare with
 * {@link NvmeControllerBench}, the future-based API on the same peer. The time is loopback round trips.
 *
 * <pre>./rdma4j bench jmh PolledQueueBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class PolledQueueBench {
    private static final int MAX = 1 << 20;
    private static final int BATCH = 32;

    @Param({"4096", "131072"})
    public int size;

    NvmeTcpLoopTarget target;
    Controller controller;
    PolledQueue queue;
    Arena arena;
    MemorySegment buffer;
    Path home;
    long done;
    int failures;
    final IoCompletion count = (tag, status) -> {
        done++;
        if (status != PolledQueue.OK) {
            failures++;
        }
    };

    @Setup(Level.Trial)
    public void open() throws IOException {
        target = new NvmeTcpLoopTarget(MAX);
        arena = Arena.ofShared();
        buffer = arena.allocate((long) size * BATCH, 4096);
        home = Files.createTempDirectory("rdma4j-bench-host");
        controller = Controller.connect(
                Target.tcp("127.0.0.1", target.address().getPort()),
                NvmeTcpLoopTarget.NQN,
                ConnectOptions.defaults()
                        .withIdentity(HostIdentity.persistent(home))
                        .withIoQueues(1)
                        .withQueueDepth(32)
                        .withKeepAlive(Duration.ZERO));
        queue = controller.openPolledQueue(1, BATCH);
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        if (failures > 0) {
            throw new IllegalStateException(failures + " I/Os failed: " + queue.failure());
        }
        queue.close();
        controller.close();
        target.close();
        arena.close();
        try (var files = Files.walk(home)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        }
    }

    private long run(boolean write, int n) {
        long target = done + n;
        for (int i = 0; i < n; i++) {
            long off = (long) i * size;
            boolean queued =
                    write ? queue.write(i * 8L, buffer, off, size, i) : queue.read(i * 8L, buffer, off, size, i);
            if (!queued) {
                throw new IllegalStateException("no free slot");
            }
        }
        while (done < target) {
            queue.poll(count);
        }
        return done;
    }

    @Benchmark
    public long read1() {
        return run(false, 1);
    }

    @Benchmark
    public long write1() {
        return run(true, 1);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long read32() {
        return run(false, BATCH);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long write32() {
        return run(true, BATCH);
    }
}
