package io.rdma4j.engine;

import io.rdma4j.Closeables;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;

/** Helpers shared by the engine tests: uniquely named engines over real libfabric providers, patterned memory. */
final class TestEngines {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private TestEngines() {}

    /** A fresh engine name; the embedded directory is shared by the whole test JVM. */
    static String name(String prefix) {
        return prefix + "-" + SEQ.incrementAndGet();
    }

    /**
     * tcp (ofi_rxm) lanes over loopback only (the filter keeps every byte on 127.0.0.1), {@code lanes} endpoints, small
     * chunks so a few MiB stripe over every lane.
     */
    static TransferEngine.Builder tcp(String prefix, int lanes) {
        return TransferEngine.builder()
                .name(name(prefix))
                .backend("libfabric")
                .provider("tcp")
                .nicFilter("lo")
                .lanesPerNic(lanes)
                .chunkSize(256 << 10)
                .queueDepth(16);
    }

    static TransferEngine.Builder shm(String prefix, int lanes) {
        return TransferEngine.builder()
                .name(name(prefix))
                .backend("libfabric")
                .provider("shm")
                .lanesPerNic(lanes)
                .chunkSize(256 << 10)
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

    /**
     * Two tcp engines, the second publishing {@code bytes} as "landing" to any peer, and a registered source of the
     * same size on the first: the setup of the tests that drive bad input through the public API.
     */
    record Landing(Arena arena, TransferEngine a, TransferEngine b, LocalBuffer src, RemoteBuffer dst)
            implements AutoCloseable {
        static Landing open(String prefix, int lanes, long bytes) {
            Arena arena = Arena.ofShared();
            TransferEngine a = tcp(prefix + "-a", lanes).build();
            TransferEngine b = tcp(prefix + "-b", lanes).build();
            b.publish("landing", b.register(allocate(arena, bytes)), Access.anyPeer());
            LocalBuffer src = a.register(allocate(arena, bytes));
            return new Landing(arena, a, b, src, a.peer(b.name()).buffer("landing"));
        }

        @Override
        public void close() {
            Closeables.closeAll(a, b, arena::close);
        }
    }
}
