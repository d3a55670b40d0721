package io.rdma4j.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;

/** Helpers shared by the engine tests: uniquely named engines over real libfabric providers, patterned memory. */
final class TestEngines {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private TestEngines() {
    }

    /** A fresh engine name; the embedded directory is shared by the whole test JVM. */
    static String name(String prefix) {
        return prefix + "-" + SEQ.incrementAndGet();
    }

    /** tcp (ofi_rxm) lanes over loopback only (the filter keeps every byte on 127.0.0.1), {@code lanes} endpoints, small chunks so a few MiB stripe over every lane. */
    static TransferEngine.Builder tcp(String prefix, int lanes) {
        return TransferEngine.builder().name(name(prefix)).backend("libfabric").provider("tcp").nicFilter("lo").lanesPerNic(lanes).chunkSize(256 << 10)
                .queueDepth(16);
    }

    static TransferEngine.Builder shm(String prefix, int lanes) {
        return TransferEngine.builder().name(name(prefix)).backend("libfabric").provider("shm").lanesPerNic(lanes).chunkSize(256 << 10)
                .queueDepth(16);
    }

    /** Fills {@code s} with a pattern derived from {@code seed} so misplaced bytes are detected. */
    static void fill(MemorySegment s, long seed) {
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, mix(seed + i));
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) mix(seed + i));
        }
    }

    static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        return x;
    }

    /** @return -1 when equal, else the first differing offset */
    static long mismatch(MemorySegment a, long aOff, MemorySegment b, long bOff, long len) {
        return MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len);
    }

    static MemorySegment allocate(Arena arena, long bytes) {
        return arena.allocate(bytes, 4096);
    }
}
