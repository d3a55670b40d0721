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
 * the transfer's fixed allocations divided by 1,000; {@link #perDescriptorOf10k} is the same move of 10,000 blocks, so
 * that a fixed allocation per batch shows as a tenth of the figure and an allocation per descriptor would not. Baseline
 * in the same run: {@link #singleWrite}, one 4 KiB write, the cost each descriptor would pay as a transfer of its own.
 *
 * <pre>./rdma4j bench jmh EngineBatchBench -prof gc</pre>
 */
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
    static final int MANY_BLOCKS = 10_000;

    /** Two engines over the no-op backend, and {@code blocks} scattered block pairs in a batch between them. */
    abstract static class Scattered {
        final int blocks;
        Arena arena;
        TransferEngine a;
        TransferEngine b;
        LocalBuffer src;
        RemoteBuffer dst;
        WriteBatch batch;
        final long[] srcOffsets;
        final long[] dstOffsets;
        final long[] lengths;

        Scattered(int blocks) {
            this.blocks = blocks;
            srcOffsets = new long[blocks];
            dstOffsets = new long[blocks];
            lengths = new long[blocks];
        }

        @Setup(Level.Trial)
        public void open() {
            // both buffers hold twice the blocks, so that scattered blocks leave gaps between them
            long span = 2 * blocks * BLOCK;
            arena = Arena.ofShared();
            String id = ProcessHandle.current().pid() + "-" + blocks;
            a = TransferEngine.builder()
                    .name("batchbench-a-" + id)
                    .backend("noop")
                    .lanesPerNic(4)
                    .chunkSize(BLOCK)
                    .queueDepth(256)
                    .busySpin(true)
                    .build();
            b = TransferEngine.builder()
                    .name("batchbench-b-" + id)
                    .backend("noop")
                    .lanesPerNic(4)
                    .chunkSize(BLOCK)
                    .build();
            b.publish("sink", b.register(arena.allocate(span, 4096)), Access.anyPeer());
            src = a.register(arena.allocate(span, 4096));
            dst = a.peer(b.name()).buffer("sink");
            // even block slots, shuffled on each side: never adjacent in both buffers, so every descriptor is a write
            SplittableRandom r = new SplittableRandom(42);
            int[] s = shuffledEvenSlots(r, blocks);
            int[] d = shuffledEvenSlots(r, blocks);
            for (int i = 0; i < blocks; i++) {
                srcOffsets[i] = s[i] * BLOCK;
                dstOffsets[i] = d[i] * BLOCK;
                lengths[i] = BLOCK;
            }
            batch = a.newWriteBatch(src, dst, blocks);
        }

        @TearDown(Level.Trial)
        public void close() {
            a.close();
            b.close();
            arena.close();
        }

        /** The batch refilled with every block and written as one transfer; {@return the bytes it moved} */
        long writeBatch() {
            batch.clear().add(srcOffsets, dstOffsets, lengths, blocks);
            if (batch.descriptors() != blocks) {
                throw new IllegalStateException("descriptors merged: " + batch.descriptors() + " writes of " + blocks);
            }
            return a.write(batch, TransferOptions.DEFAULT).join().bytes();
        }
    }

    /** 1,000 blocks. */
    @State(Scope.Benchmark)
    public static class Thousand extends Scattered {
        public Thousand() {
            super(BLOCKS);
        }
    }

    /** 10,000 blocks. */
    @State(Scope.Benchmark)
    public static class TenThousand extends Scattered {
        public TenThousand() {
            super(MANY_BLOCKS);
        }
    }

    private static int[] shuffledEvenSlots(SplittableRandom r, int blocks) {
        int[] slots = new int[blocks];
        for (int i = 0; i < blocks; i++) {
            slots[i] = 2 * i;
        }
        for (int i = blocks - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = slots[i];
            slots[i] = slots[j];
            slots[j] = t;
        }
        return slots;
    }

    /** The batch refilled with 1,000 scattered 4 KiB descriptors and written as one transfer; per descriptor. */
    @Benchmark
    @OperationsPerInvocation(BLOCKS)
    public long perDescriptor(Thousand s) {
        return s.writeBatch();
    }

    /** The same with 10,000 descriptors; per descriptor. */
    @Benchmark
    @OperationsPerInvocation(MANY_BLOCKS)
    public long perDescriptorOf10k(TenThousand s) {
        return s.writeBatch();
    }

    /** One 4 KiB write: what each descriptor would cost as a transfer of its own. */
    @Benchmark
    public long singleWrite(Thousand s) {
        return s.a.write(s.src, s.srcOffsets[0], s.dst, s.dstOffsets[0], BLOCK, TransferOptions.DEFAULT)
                .join()
                .bytes();
    }
}
