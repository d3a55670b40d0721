package io.rdma4j.perf;

import io.rdma4j.engine.HostMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What this machine's memory allows a sync over a CPU-copy transport: {@code n} threads of this process each copy
 * {@code bytes} between huge-page buffers at once, the work of {@code n} hops of a relay chain (over shm, every byte a
 * subscriber receives is one CPU copy; over tcp, two). The time is a floor no transport that copies with the CPU can
 * beat, and its ratio for {@code n} threads against one bounds the relay's {@code n}-subscriber time against one. Each
 * thread copies from a shared source of {@link #BLOCK} bytes (larger than a last-level cache) into its own destination,
 * round after round until it moved {@code bytes}.
 */
final class CopyFloor {
    /** The block each thread copies round after round: 256 MiB, beyond any last-level cache. */
    static final long BLOCK = 256L << 20;

    private CopyFloor() {}

    /** {@return the seconds {@code threads} threads took to copy {@code bytes} each, all at once; best of three} */
    static double seconds(long bytes, int threads) throws Exception {
        try (Arena arena = Arena.ofShared()) {
            long block = Math.min(bytes, BLOCK);
            MemorySegment src = HostMemory.allocate(arena, block);
            src.fill((byte) 7);
            List<MemorySegment> dsts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                dsts.add(HostMemory.allocate(arena, block));
            }
            double best = Double.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                best = Math.min(best, once(src, dsts, bytes));
            }
            for (int t = 0; t < threads; t++) {
                if (dsts.get(t).mismatch(src) >= 0) {
                    throw new IllegalStateException("copy floor: thread " + t + "'s copy differs from its source");
                }
            }
            return best;
        }
    }

    private static double once(MemorySegment src, List<MemorySegment> dsts, long bytes) throws Exception {
        int n = dsts.size();
        CyclicBarrier start = new CyclicBarrier(n);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        // each thread times itself: a clock read by this thread after the barrier could come after a copy of a few
        // milliseconds had ended (this thread descheduled on a small machine), and the floor would read near zero
        long[] began = new long[n];
        long[] ended = new long[n];
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            MemorySegment dst = dsts.get(t);
            int i = t;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    began[i] = System.nanoTime();
                    for (long done = 0; done < bytes; ) {
                        long len = Math.min(src.byteSize(), bytes - done);
                        MemorySegment.copy(src, 0, dst, 0, len);
                        done += len;
                    }
                    ended[i] = System.nanoTime();
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failed.get() != null) {
            throw new IllegalStateException("copy floor: a copying thread failed", failed.get());
        }
        long first = began[0];
        long last = ended[0];
        for (int t = 1; t < n; t++) {
            first = Math.min(first, began[t]);
            last = Math.max(last, ended[t]);
        }
        return (last - first) / 1e9;
    }
}
