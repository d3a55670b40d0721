package io.rdma4j.perf;

import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.HostIdentity;
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
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The public API's cost per I/O: {@link Controller#read} and {@link Controller#write} of one command, one at a time,
 * over NVMe/TCP on loopback against {@link NvmeTcpLoopTarget}. With {@code -prof gc}, {@code gc.alloc.rate.norm} is
 * what one I/O allocates from the call to its completion, all threads included; compare with {@link NvmeTcpQueueBench}
 * (the queue alone) for what the controller layer adds. The time is loopback round trips.
 *
 * <pre>./rdma4j bench jmh NvmeControllerBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class NvmeControllerBench {
    private static final int MAX = 1 << 20;

    @Param({"4096", "1048576"})
    public int size;

    NvmeTcpLoopTarget target;
    Controller controller;
    Arena arena;
    MemorySegment buffer;
    Path home;

    @Setup(Level.Trial)
    public void open() throws IOException {
        target = new NvmeTcpLoopTarget(MAX);
        arena = Arena.ofShared();
        buffer = arena.allocate(size, 4096);
        home = Files.createTempDirectory("rdma4j-bench-host");
        controller = Controller.connect(
                Target.tcp("127.0.0.1", target.address().getPort()),
                NvmeTcpLoopTarget.NQN,
                ConnectOptions.defaults()
                        .withIdentity(HostIdentity.persistent(home))
                        .withIoQueues(1)
                        .withQueueDepth(32)
                        .withKeepAlive(Duration.ZERO));
        controller.namespace(1); // cached: the measured I/O sends no admin command
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        controller.close();
        target.close();
        arena.close();
        try (var files = Files.walk(home)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        }
    }

    @Benchmark
    public Object read() {
        return controller.read(1, 0, buffer).join();
    }

    @Benchmark
    public Object write() {
        return controller.write(1, 0, buffer).join();
    }
}
