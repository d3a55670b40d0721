package io.rdma4j.perf;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.WriteBatch;
import java.lang.foreign.Arena;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's own cost per descriptor of a {@link WriteBatch}, over {@link NoopEngineBackend} (nothing moves): a
 * KV-cache move of 1,000 blocks of 4 KiB, scattered in both buffers (no two adjacent, so none merge), refilled and
 * written as one transfer over 4 lanes, reported per descriptor ({@code @OperationsPerInvocation}). Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} of {@link #perDescriptor} is what the batch allocates per descriptor,
 * the transfer's fixed allocations divided by 1,000. Baseline in the same run: {@link #singleWrite}, one 4 KiB write,
 * the cost each descriptor would pay as a transfer of its own.
 *
 * <pre>./rdma4j bench jmh EngineBatchBench -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class EngineBatchBench {
    static final long BLOCK = 4096;
    static final int BLOCKS = 1000;
    /** Both buffers hold twice the blocks, so that scattered blocks leave gaps between them. */
    static final long SPAN = 2 * BLOCKS * BLOCK;

    Arena arena;
    TransferEngine a;
    TransferEngine b;
    LocalBuffer src;
    RemoteBuffer dst;
    WriteBatch batch;
    final long[] srcOffsets = new long[BLOCKS];
    final long[] dstOffsets = new long[BLOCKS];
    final long[] lengths = new long[BLOCKS];

    @Setup(Level.Trial)
    public void open() {
        arena = Arena.ofShared();
        long pid = ProcessHandle.current().pid();
        a = TransferEngine.builder()
                .name("batchbench-a-" + pid)
                .backend("noop")
                .lanesPerNic(4)
                .chunkSize(BLOCK)
                .queueDepth(256)
                .busySpin(true)
                .build();
        b = TransferEngine.builder()
                .name("batchbench-b-" + pid)
                .backend("noop")
                .lanesPerNic(4)
                .chunkSize(BLOCK)
                .build();
        b.publish("sink", b.register(arena.allocate(SPAN, 4096)), Access.anyPeer());
        src = a.register(arena.allocate(SPAN, 4096));
        dst = a.peer(b.name()).buffer("sink");
        // even block slots, shuffled on each side: never adjacent in both buffers, so every descriptor is a write
        SplittableRandom r = new SplittableRandom(42);
        int[] s = shuffledEvenSlots(r);
        int[] d = shuffledEvenSlots(r);
        for (int i = 0; i < BLOCKS; i++) {
            srcOffsets[i] = s[i] * BLOCK;
            dstOffsets[i] = d[i] * BLOCK;
            lengths[i] = BLOCK;
        }
        batch = a.newWriteBatch(src, dst, BLOCKS);
    }

    private static int[] shuffledEvenSlots(SplittableRandom r) {
        int[] slots = new int[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
            slots[i] = 2 * i;
        }
        for (int i = BLOCKS - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = slots[i];
            slots[i] = slots[j];
            slots[j] = t;
        }
        return slots;
    }

    @TearDown(Level.Trial)
    public void close() {
        a.close();
        b.close();
        arena.close();
    }

    /** The batch refilled with 1,000 scattered 4 KiB descriptors and written as one transfer; per descriptor. */
    @Benchmark
    @OperationsPerInvocation(BLOCKS)
    public long perDescriptor() {
        batch.clear().add(srcOffsets, dstOffsets, lengths, BLOCKS);
        if (batch.descriptors() != BLOCKS) {
            throw new IllegalStateException("descriptors merged: " + batch.descriptors() + " writes of " + BLOCKS);
        }
        return a.write(batch, TransferOptions.DEFAULT).join().bytes();
    }

    /** One 4 KiB write: what each descriptor would cost as a transfer of its own. */
    @Benchmark
    public long singleWrite() {
        return a.write(src, srcOffsets[0], dst, dstOffsets[0], BLOCK, TransferOptions.DEFAULT)
                .join()
                .bytes();
    }
}
