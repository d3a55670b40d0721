package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Hundreds of concurrent transfers from several threads, mixed sizes, each to its own slice: all land, each tag once.
 */
class EngineConcurrencyTest {
    @Test
    void hundredsOfConcurrentTransfersFromSeveralThreadsAllLand() throws Exception {
        int threads = 4;
        int perThread = 100;
        long slice = 96 << 10;
        try (Arena arena = Arena.ofShared();
                TransferEngine a =
                        TestEngines.tcp("conc-a", 3).progressThreads(2).build();
                TransferEngine b = TestEngines.tcp("conc-b", 3).build();
                ExecutorService pool = Executors.newFixedThreadPool(threads)) {
            long total = threads * perThread * slice;
            MemorySegment dst = TestEngines.allocate(arena, total);
            MemorySegment src = TestEngines.allocate(arena, total);
            TestEngines.fill(src, 77);
            b.publish("landing", b.register(dst), Access.anyPeer());
            LocalBuffer s = a.register(src);
            RemoteBuffer target = a.peer(b.name()).buffer("landing");
            List<Future<List<Transfer>>> submitted = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int tt = t;
                submitted.add(pool.submit(() -> {
                    List<Transfer> mine = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        int k = tt * perThread + i;
                        // sizes vary from a few bytes to the whole slice so small and striped paths interleave
                        long len = (k % 5 == 0) ? slice : (k % 5 == 1) ? 7 : (k % 5) * 20_000L;
                        long off = k * slice;
                        mine.add(a.write(s, off, target, off, len, TransferOptions.tag(k)));
                    }
                    return mine;
                }));
            }
            long bytes = 0;
            for (Future<List<Transfer>> f : submitted) {
                for (Transfer t : f.get()) {
                    bytes += t.join().bytes();
                }
            }
            Set<Long> tags = new HashSet<>();
            for (int k = 0; k < threads * perThread; k++) {
                Notification n = b.awaitTag(k, Duration.ofSeconds(20));
                assertNotNull(n, "tag " + k);
                assertTrue(tags.add(n.tag()));
                long len = (k % 5 == 0) ? slice : (k % 5 == 1) ? 7 : (k % 5) * 20_000L;
                assertEquals(len, n.length());
                assertEquals(-1, TestEngines.mismatch(src, k * slice, dst, k * slice, len), "transfer " + k);
            }
            assertEquals(0, b.notifications().size(), "no extra notifications");
            assertTrue(bytes > 0);
            assertEquals(
                    0,
                    ((io.rdma4j.engine.internal.EngineCore) a).progressErrors(),
                    String.valueOf(((io.rdma4j.engine.internal.EngineCore) a).lastProgressError()));
        }
    }
}
