package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.spi.FaultInjectingBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Faults injected under a real tcp backend: lane failure, retry and failover, exhaustion, deadline, cancel, peer loss,
 * duplicate immediates.
 */
class EngineFaultTest {
    static final long MIB = 1 << 20;
    static Arena arena;
    static FaultInjectingBackend[] faults = new FaultInjectingBackend[2];
    static TransferEngine a;
    static TransferEngine b;
    static MemorySegment bMem;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        a = TestEngines.tcp("fault-a", 4)
                .laneCooldown(Duration.ofMillis(5), Duration.ofMillis(50))
                .backendWrapper(x -> faults[0] = new FaultInjectingBackend(x))
                .build();
        b = TestEngines.tcp("fault-b", 4)
                .backendWrapper(x -> faults[1] = new FaultInjectingBackend(x))
                .build();
        bMem = TestEngines.allocate(arena, 8 * MIB);
        b.publish("landing", b.register(bMem), Access.anyPeer());
    }

    @AfterAll
    static void stop() {
        a.close();
        b.close();
        arena.close();
    }

    private static Throwable failure(Transfer t) {
        CompletionException e =
                assertThrows(CompletionException.class, () -> t.future().join());
        return e.getCause();
    }

    private static void assertHealthyWrite(long seed) throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 3 * MIB);
        TestEngines.fill(src, seed);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            a.write(s, dst, TransferOptions.tag(seed)).join();
            assertNotNull(b.awaitTag(seed, Duration.ofSeconds(10)));
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 0, src.byteSize()));
        }
    }

    @Test
    void failedChunksAreRetriedOnAnotherLaneAndNothingIsLost() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 4 * MIB);
        TestEngines.fill(src, 11);
        faults[0].failCompletions(1, 2).failPosts(2, 1);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            TransferResult r = a.write(s, dst, TransferOptions.tag(1111)).join();
            assertTrue(r.retries() >= 2, "expected retries, got " + r);
            Notification n = b.awaitTag(1111, Duration.ofSeconds(10));
            assertNotNull(n);
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 0, src.byteSize()));
            assertTrue(a.laneStats().get(1).errors() >= 2, a.laneStats().toString());
            assertNull(b.awaitTag(1111, Duration.ofMillis(100)));
        }
    }

    @Test
    void transferFailsNamingEveryLaneWhenNoneIsLeft() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 2 * MIB);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            for (int lane = 0; lane < 4; lane++) {
                faults[0].failCompletions(lane, 1000);
            }
            Throwable t = failure(a.write(s, dst, TransferOptions.DEFAULT));
            assertInstanceOf(LaneFailureException.class, t);
            assertTrue(t.getMessage().contains("injected completion error"), t.getMessage());
            assertTrue(t.getMessage().contains("lane "), t.getMessage());
        } finally {
            for (int lane = 0; lane < 4; lane++) {
                faults[0].failCompletions(lane, 0);
            }
        }
        // the lanes cool down and the engine carries on
        Thread.sleep(120);
        assertHealthyWrite(21);
    }

    /** Full send queues: the engine keeps what the backend refused and posts it again, losing nothing. */
    @Test
    void postsRefusedAsBackPressuredGoOutLater() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 3 * MIB);
        TestEngines.fill(src, 41);
        long before = faults[0].backPressuredPosts();
        faults[0].backPressure(Duration.ofMillis(300));
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            a.write(s, dst, TransferOptions.tag(4141)).join();
            assertTrue(faults[0].backPressuredPosts() > before, "no post was refused: this test tests nothing");
            assertNotNull(b.awaitTag(4141, Duration.ofSeconds(10)));
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 0, src.byteSize()));
        }
    }

    @Test
    void deadlineFailsAStalledTransferAndTheEngineStaysUsable() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 1 * MIB);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            for (int lane = 0; lane < 4; lane++) {
                faults[0].hold(lane);
            }
            Transfer t = a.write(s, dst, TransferOptions.DEFAULT.withDeadline(Duration.ofMillis(300)));
            assertInstanceOf(TransferTimeoutException.class, failure(t));
        } finally {
            for (int lane = 0; lane < 4; lane++) {
                faults[0].release(lane);
            }
        }
        assertHealthyWrite(31);
    }

    @Test
    void cancelStopsATransferAndSendsNoNotification() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 1 * MIB);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            for (int lane = 0; lane < 4; lane++) {
                faults[0].hold(lane);
            }
            Transfer t = a.write(s, dst, TransferOptions.tag(4242));
            assertTrue(t.cancel());
            CancellationException e =
                    assertThrows(CancellationException.class, () -> t.future().join());
            assertTrue(t.future().isCompletedExceptionally(), e.getMessage());
        } finally {
            for (int lane = 0; lane < 4; lane++) {
                faults[0].release(lane);
            }
        }
        assertNull(b.awaitTag(4242, Duration.ofMillis(300)), "a cancelled transfer must not notify");
        assertHealthyWrite(41);
    }

    @Test
    void duplicatedImmediatesDeliverEachTagOnce() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 64 << 10);
        faults[1].duplicateImmediates(true);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            for (int i = 0; i < 20; i++) {
                a.write(s, 0, dst, i * (64L << 10), src.byteSize(), TransferOptions.tag(50_000 + i))
                        .join();
            }
            Set<Long> seen = new HashSet<>();
            for (int i = 0; i < 20; i++) {
                Notification n = b.awaitTag(50_000 + i, Duration.ofSeconds(10));
                assertNotNull(n, "tag " + (50_000 + i));
                assertTrue(seen.add(n.tag()));
            }
            assertTrue(faults[1].duplicatedImmediates() >= 20, "no immediate was duplicated");
            assertNull(b.awaitTag(50_000, Duration.ofMillis(200)), "a duplicate produced a second notification");
        } finally {
            faults[1].duplicateImmediates(false);
        }
    }

    @Test
    void peerLossFailsItsTransfersPromptlyAndOtherPeersStillWork() throws Exception {
        TransferEngine c = TestEngines.tcp("fault-c", 2).build();
        MemorySegment cMem = TestEngines.allocate(arena, 2 * MIB);
        c.publish("landing", c.register(cMem), Access.anyPeer());
        MemorySegment src = TestEngines.allocate(arena, 2 * MIB);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(c.name()).buffer("landing");
            for (int lane = 0; lane < 4; lane++) {
                faults[0].hold(lane);
            }
            Transfer t = a.write(s, dst, TransferOptions.tag(9));
            c.close();
            Throwable f = assertThrows(
                            java.util.concurrent.ExecutionException.class,
                            () -> t.future().get(10, TimeUnit.SECONDS))
                    .getCause();
            assertInstanceOf(PeerLostException.class, f);
            assertTrue(f.getMessage().contains(c.name()), f.getMessage());
        } finally {
            for (int lane = 0; lane < 4; lane++) {
                faults[0].release(lane);
            }
            c.close();
        }
        assertThrows(RuntimeException.class, () -> a.peer(c.name()));
        assertHealthyWrite(61);
    }

    @Test
    void aRestartedPeerIsRecognisedByItsGenerationAndReconnected() throws Exception {
        String name = TestEngines.name("fault-restart");
        MemorySegment mem1 = TestEngines.allocate(arena, 1 << 20);
        MemorySegment src = TestEngines.allocate(arena, 1 << 20);
        TestEngines.fill(src, 71);
        long firstGeneration;
        try (LocalBuffer s = a.register(src)) {
            try (TransferEngine first = TransferEngine.builder()
                    .name(name)
                    .backend("libfabric")
                    .provider("tcp")
                    .nicFilter("lo")
                    .build()) {
                first.publish("landing", first.register(mem1), Access.anyPeer());
                Peer p1 = a.peer(name);
                firstGeneration = p1.generation();
                a.write(s, p1.buffer("landing")).join();
            }
            MemorySegment mem2 = TestEngines.allocate(arena, 1 << 20);
            try (TransferEngine second = TransferEngine.builder()
                    .name(name)
                    .backend("libfabric")
                    .provider("tcp")
                    .nicFilter("lo")
                    .build()) {
                second.publish("landing", second.register(mem2), Access.anyPeer());
                Peer p2 = a.peer(name);
                assertTrue(p2.generation() != firstGeneration, "the restarted peer has a new generation");
                a.write(s, p2.buffer("landing"), TransferOptions.tag(72)).join();
                assertNotNull(second.awaitTag(72, Duration.ofSeconds(10)));
                assertEquals(-1, TestEngines.mismatch(src, 0, mem2, 0, src.byteSize()));
            }
        }
    }
}
