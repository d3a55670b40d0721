package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad input fails with a clear exception before anything is posted (lane counters stay at zero). */
class EngineBadInputTest {
    static Arena arena;
    static TransferEngine a;
    static TransferEngine b;
    static RemoteBuffer dst;
    static LocalBuffer src;

    static TestEngines.Landing landing;

    @BeforeAll
    static void start() {
        landing = TestEngines.Landing.open("bad", 2, 1 << 20);
        arena = landing.arena();
        a = landing.a();
        b = landing.b();
        src = landing.src();
        dst = landing.dst();
    }

    @AfterAll
    static void stop() {
        landing.close();
    }

    private static void nothingPosted() {
        long chunks = a.laneStats().stream().mapToLong(LaneStats::chunks).sum();
        long errors = a.laneStats().stream().mapToLong(LaneStats::errors).sum();
        assertEquals(0, chunks + errors, "something was posted: " + a.laneStats());
    }

    @Test
    void rejectsRangesOutsideEitherBuffer() {
        var e1 = assertThrows(
                InvalidArgumentException.class, () -> a.write(src, 1, dst, 0, 1 << 20, TransferOptions.DEFAULT));
        assertTrue(e1.getMessage().contains("write source"), e1.getMessage());
        var e2 = assertThrows(
                InvalidArgumentException.class, () -> a.write(src, 0, dst, 10, 1 << 20, TransferOptions.DEFAULT));
        assertTrue(e2.getMessage().contains("write target"), e2.getMessage());
        assertThrows(InvalidArgumentException.class, () -> a.write(src, -1, dst, 0, 5, TransferOptions.DEFAULT));
        assertThrows(InvalidArgumentException.class, () -> a.write(src, 0, dst, 0, -5, TransferOptions.DEFAULT));
        assertThrows(
                InvalidArgumentException.class,
                () -> a.read(src, 0, dst, Long.MAX_VALUE - 2, 10, TransferOptions.DEFAULT));
        nothingPosted();
    }

    @Test
    void rejectsUnknownPeersAndBuffers() {
        var e = assertThrows(UnknownPeerException.class, () -> a.peer("nobody-here"));
        assertTrue(e.getMessage().contains("nobody-here"), e.getMessage());
        var f = assertThrows(
                UnknownBufferException.class, () -> a.peer(b.name()).buffer("missing"));
        assertTrue(f.getMessage().contains("missing") && f.getMessage().contains("publish"), f.getMessage());
        nothingPosted();
    }

    @Test
    void rejectsBuffersNotRegisteredHere() {
        try (TransferEngine c = TestEngines.tcp("bad-c", 1).build()) {
            LocalBuffer foreign = c.register(TestEngines.allocate(arena, 4096));
            var e = assertThrows(InvalidArgumentException.class, () -> a.write(foreign, dst));
            assertTrue(e.getMessage().contains("not registered with this engine"), e.getMessage());
            RemoteBuffer foreignRemote = c.peer(b.name()).buffer("landing");
            assertThrows(InvalidArgumentException.class, () -> a.write(src, foreignRemote));
        }
        LocalBuffer closed = a.register(TestEngines.allocate(arena, 4096));
        closed.close();
        assertThrows(ClosedException.class, () -> a.write(closed, dst));
        assertThrows(InvalidArgumentException.class, () -> a.register(MemorySegment.ofArray(new byte[16])));
        nothingPosted();
    }

    @Test
    void rejectsBadOptionsAndBatches() {
        assertThrows(InvalidArgumentException.class, () -> TransferOptions.DEFAULT.withCrc32c());
        assertThrows(InvalidArgumentException.class, () -> TransferOptions.DEFAULT.withDeadline(Duration.ZERO));
        assertThrows(InvalidArgumentException.class, () -> a.read(src, 0, dst, 0, 16, TransferOptions.tag(1)));
        // one bad request fails the whole batch before anything is posted
        var e = assertThrows(
                InvalidArgumentException.class,
                () -> a.writeAll(List.of(
                        new TransferRequest(src, 0, dst, 0, 4096, TransferOptions.DEFAULT),
                        new TransferRequest(src, 0, dst, 1 << 20, 4096, TransferOptions.DEFAULT))));
        assertTrue(e.getMessage().contains("request 1"), e.getMessage());
        nothingPosted();
    }

    @Test
    void closedEngineRejectsEverything() {
        TransferEngine c = TestEngines.tcp("bad-d", 1).build();
        LocalBuffer s = c.register(TestEngines.allocate(arena, 4096));
        RemoteBuffer r = c.peer(b.name()).buffer("landing");
        c.close();
        assertThrows(ClosedException.class, () -> c.write(s, r));
        assertThrows(ClosedException.class, () -> c.register(TestEngines.allocate(arena, 4096)));
        assertThrows(ClosedException.class, () -> c.peer(b.name()));
        c.close();
    }

    @Test
    void rejectsBadBuilderSettings() {
        assertThrows(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().name("bad name!").build());
        assertThrows(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().chunkSize(10).build());
        assertThrows(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().queueDepth(0).build());
        var e = assertThrows(
                io.rdma4j.BackendUnavailableException.class,
                () -> TransferEngine.builder().backend("nonexistent").build());
        assertTrue(e.getMessage().contains("nonexistent"), e.getMessage());
        // an application has no ./rdma4j: the message names the API to call instead
        assertTrue(
                e.getMessage().contains("known: [libfabric]")
                        && e.getMessage().contains("TransferEngine.Builder.backend()"),
                e.getMessage());
    }

    @Test
    void keysGoOnlyToPeersOnTheAccessList() {
        b.publish("private", b.register(TestEngines.allocate(arena, 4096)), Access.only(a.name()));
        RemoteBuffer mine = a.peer(b.name()).buffer("private");
        assertEquals(4096, mine.length());
        try (TransferEngine c = TestEngines.tcp("bad-e", 1).build()) {
            var e = assertThrows(
                    UnknownBufferException.class, () -> c.peer(b.name()).buffer("private"));
            assertTrue(e.getMessage().contains("private"), e.getMessage());
        }
        nothingPosted();
    }
}
