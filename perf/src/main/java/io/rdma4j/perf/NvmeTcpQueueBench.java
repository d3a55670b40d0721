package io.rdma4j.perf;

import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * The NVMe/TCP initiator's data path, one command at a time through a real {@link TcpQueue} over loopback against
 * {@link NvmeTcpLoopTarget} (which allocates nothing per command): capsule encoding, PDU header parsing, C2HData into
 * the caller's buffer, R2T answered by H2CData, digests on or off. Run with {@code -prof gc}:
 * {@code gc.alloc.rate.norm} is the bytes the queue (all its threads) allocates per command; the time is dominated by
 * loopback round trips and is not the point. Before the zero-copy rework the figure grew with the transfer size (every
 * PDU was copied into new arrays); now it is a small constant (the command's future and completion entry).
 *
 * <pre>./rdma4j bench jmh NvmeTcpQueueBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class NvmeTcpQueueBench {
    private static final int MAX = 1 << 20;

    @Param({"false", "true"})
    public boolean digests;

    @Param({"4096", "131072", "1048576"})
    public int size;

    NvmeTcpLoopTarget target;
    TcpQueue queue;
    Arena arena;
    byte[] readSqe;
    byte[] writeSqe;
    FabricQueue.Data readData;
    FabricQueue.Data writeData;

    @Setup(Level.Trial)
    public void open() throws IOException {
        target = new NvmeTcpLoopTarget(MAX);
        arena = Arena.ofShared();
        MemorySegment buf = arena.allocate(MAX, 4096);
        queue = TcpQueue.open(
                target.address(),
                "bench",
                new TcpQueue.Config(1, 32, digests, digests, Duration.ofSeconds(10), Duration.ofSeconds(30), MAX, 8192),
                TcpQueue.Connector.PLAIN);
        int blocks = size / 512;
        readSqe = Sqe.readWrite(false, 1, 0, blocks);
        writeSqe = Sqe.readWrite(true, 1, 0, blocks);
        readData = new FabricQueue.Data(buf, 0, size, false);
        writeData = new FabricQueue.Data(buf, 0, size, true);
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        queue.close();
        target.close();
        arena.close();
    }

    /** A Read answered by C2HData with the SUCCESS flag. */
    @Benchmark
    public int read() {
        return queue.submit(readSqe, readData, "bench read").join().status();
    }

    /** A Write: in the capsule at 4 KiB, by R2T and H2CData above the 8 KiB in-capsule limit. */
    @Benchmark
    public int write() {
        return queue.submit(writeSqe, writeData, "bench write").join().status();
    }
}
