package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.Closeables;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Progress threads of tcp engines sleep in the kernel on their lanes' queue descriptors when idle (shm's park): a
 * target left idle long enough to reach its longest sleep still takes a peer's stream and notification.
 */
class EngineKernelWaitTest {
    static final long SIZE = 8L << 20;

    @Test
    void anIdleTcpTargetWakesForAStreamAndItsTag() throws Exception {
        Arena arena = Arena.ofShared();
        TransferEngine a = TestEngines.tcp("kw-a", 2).build();
        TransferEngine b = TestEngines.tcp("kw-b", 2).build();
        try {
            assertTrue(
                    b.description().contains("progress thread(s) sleeping in the kernel when idle"), b.description());
            MemorySegment landing = TestEngines.allocate(arena, SIZE);
            b.publish("landing", b.register(landing), Access.anyPeer());
            MemorySegment source = TestEngines.allocate(arena, SIZE);
            TestEngines.fill(source, 77);
            LocalBuffer src = a.register(source);
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            for (int round = 0; round < 3; round++) {
                // idle well past the backoff's longest sleep (1 ms), so the target is asleep in the kernel
                Thread.sleep(200);
                a.write(src, dst, TransferOptions.tag(900 + round)).join();
                Notification n = b.awaitTag(900 + round, Duration.ofSeconds(30));
                assertNotNull(n, "no tag " + (900 + round) + " in 30 s: the idle target slept through it");
                assertEquals(900 + round, n.tag());
                assertEquals(-1, TestEngines.mismatch(source, 0, landing, 0, SIZE), "round " + round);
            }
        } finally {
            Closeables.closeAll(a, b, arena::close);
        }
    }

    @Test
    void shmEnginesParkInstead() {
        try (TransferEngine e = TestEngines.shm("kw-shm", 1).build()) {
            assertFalse(e.description().contains("sleeping in the kernel"), e.description());
        }
    }
}
