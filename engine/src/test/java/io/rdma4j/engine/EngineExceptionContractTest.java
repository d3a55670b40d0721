package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.topology.Shapes;
import io.rdma4j.topology.Topology;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exception contract {@link io.rdma4j.Rdma4jException} and this package's description write down, driven through
 * the public API: every bad input the engine checks throws the documented rdma4j type (and so an
 * {@code Rdma4jException}), a null argument a {@link NullPointerException}, and nothing is posted.
 */
class EngineExceptionContractTest {
    static Arena arena;
    static TransferEngine a;
    static TransferEngine b;
    static LocalBuffer src;
    static RemoteBuffer dst;

    static TestEngines.Landing landing;

    @BeforeAll
    static void start() {
        landing = TestEngines.Landing.open("exc", 1, 64 << 10);
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

    /** Asserts {@code call} throws exactly the documented {@code type}, which is an rdma4j exception. */
    private static <T extends Rdma4jException> T fails(Class<T> type, Executable call) {
        T e = assertThrows(type, call);
        assertEquals(type, e.getClass(), "the documented type itself, not a subclass: " + e);
        assertInstanceOf(Rdma4jException.class, e);
        assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "a message saying what is wrong");
        return e;
    }

    private static void nothingPosted() {
        long chunks =
                a.laneStats().stream().mapToLong(l -> l.chunks() + l.errors()).sum();
        assertEquals(0, chunks, "something was posted: " + a.laneStats());
    }

    @Test
    void rangesOutsideABufferAreInvalidArguments() {
        var e = fails(InvalidArgumentException.class, () -> a.write(src, 1, dst, 0, 64 << 10, TransferOptions.DEFAULT));
        assertTrue(e.getMessage().contains("write source") && e.getMessage().contains("outside"), e.getMessage());
        e = fails(InvalidArgumentException.class, () -> a.write(src, 0, dst, 8, 64 << 10, TransferOptions.DEFAULT));
        assertTrue(e.getMessage().contains("write target"), e.getMessage());
        fails(InvalidArgumentException.class, () -> a.write(src, -1, dst, 0, 5, TransferOptions.DEFAULT));
        fails(InvalidArgumentException.class, () -> a.write(src, 0, dst, 0, -5, TransferOptions.DEFAULT));
        fails(
                InvalidArgumentException.class,
                () -> a.read(src, 0, dst, Long.MAX_VALUE - 2, 10, TransferOptions.DEFAULT));
        fails(InvalidArgumentException.class, () -> a.read(src, 65535, dst, 0, 2, TransferOptions.DEFAULT));
        fails(InvalidArgumentException.class, () -> a.explain(src, 0, dst, 1, 64 << 10));
        nothingPosted();
    }

    @Test
    void aBadRequestFailsTheWholeBatchAsAnInvalidArgument() {
        var e = fails(
                InvalidArgumentException.class,
                () -> a.writeAll(List.of(
                        new TransferRequest(src, 0, dst, 0, 4096, TransferOptions.DEFAULT),
                        new TransferRequest(src, 0, dst, 64 << 10, 4096, TransferOptions.DEFAULT))));
        assertTrue(
                e.getMessage().contains("request 1") && e.getMessage().contains("nothing was posted"), e.getMessage());
        nothingPosted();
    }

    @Test
    void buffersOfAnotherEngineAreInvalidArguments() {
        try (TransferEngine c = TestEngines.tcp("exc-c", 1).build()) {
            LocalBuffer foreign = c.register(TestEngines.allocate(arena, 4096));
            var e = fails(InvalidArgumentException.class, () -> a.write(foreign, dst));
            assertTrue(e.getMessage().contains("engine.register"), e.getMessage());
            RemoteBuffer foreignRemote = c.peer(b.name()).buffer("landing");
            fails(InvalidArgumentException.class, () -> a.write(src, foreignRemote));
            fails(InvalidArgumentException.class, () -> a.publish("foreign", foreign, Access.anyPeer()));
        }
        nothingPosted();
    }

    @Test
    void closedBuffersAndFreedMemoryAreClosed() {
        LocalBuffer closed = a.register(TestEngines.allocate(arena, 4096));
        closed.close();
        var e = fails(ClosedException.class, () -> a.write(closed, dst));
        assertTrue(e.getMessage().contains("register the memory again"), e.getMessage());

        Arena gone = Arena.ofShared();
        MemorySegment freed = TestEngines.allocate(gone, 4096);
        LocalBuffer onFreed = a.register(freed);
        gone.close();
        e = fails(ClosedException.class, () -> a.write(onFreed, dst));
        assertTrue(e.getMessage().contains("arena"), e.getMessage());
        fails(ClosedException.class, () -> a.register(freed));
        onFreed.close();
        nothingPosted();
    }

    @Test
    void memoryANicCannotUseIsAnInvalidArgument() {
        var e = fails(InvalidArgumentException.class, () -> a.register(MemorySegment.ofArray(new byte[16])));
        assertTrue(e.getMessage().contains("Arena"), e.getMessage());
        fails(InvalidArgumentException.class, () -> a.register(arena.allocate(0)));
    }

    @Test
    void optionsThatDoNotGoTogetherAreInvalidArguments() {
        var e = fails(InvalidArgumentException.class, () -> TransferOptions.DEFAULT.withCrc32c());
        assertTrue(e.getMessage().contains("withTag"), e.getMessage());
        fails(InvalidArgumentException.class, () -> TransferOptions.DEFAULT.withDeadline(Duration.ZERO));
        fails(InvalidArgumentException.class, () -> new TransferOptions(Duration.ofSeconds(-1), false, 0, false));
        fails(InvalidArgumentException.class, () -> a.read(src, 0, dst, 0, 16, TransferOptions.tag(1)));
        nothingPosted();
    }

    @Test
    void namesAgainstTheRuleAreInvalidArguments() {
        LocalBuffer buf = a.register(TestEngines.allocate(arena, 4096));
        var e = fails(InvalidArgumentException.class, () -> a.publish("a/b", buf, Access.anyPeer()));
        assertTrue(e.getMessage().contains("must match"), e.getMessage());
        fails(InvalidArgumentException.class, () -> a.peer(b.name()).buffer("no/slash"));
        fails(InvalidArgumentException.class, () -> a.write(src, b.name(), "bad name"));
        fails(InvalidArgumentException.class, () -> a.peer(""));
        buf.close();
        nothingPosted();
    }

    @Test
    void badBuilderSettingsAreInvalidArguments() {
        fails(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().name("bad name!").build());
        var e = fails(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().chunkSize(10).build());
        assertTrue(e.getMessage().contains("chunk size") && e.getMessage().contains("Builder"), e.getMessage());
        fails(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().queueDepth(0).build());
        fails(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().progressThreads(0).build());
        fails(
                InvalidArgumentException.class,
                () -> TransferEngine.builder().laneWeight(0, -1).build());
    }

    @Test
    void badValuesOfThePublicRecordsAreInvalidArguments() {
        fails(InvalidArgumentException.class, () -> MemoryLocation.numa(-2));
        fails(InvalidArgumentException.class, () -> MemoryLocation.gpu("not-a-bdf"));
        fails(InvalidArgumentException.class, () -> Access.only());
        fails(InvalidArgumentException.class, () -> VolumeSpec.of("tcp://127.0.0.1:4420/nqn.x"));
        fails(InvalidArgumentException.class, () -> VolumeSpec.of("tcp://127.0.0.1:70000/nqn.x/1"));
        fails(
                InvalidArgumentException.class,
                () -> VolumeSpec.of("tcp://127.0.0.1:4420/nqn.x/1").withStripeUnit(3000));
        fails(
                InvalidArgumentException.class,
                () -> VolumeSpec.of("tcp://127.0.0.1:4420/nqn.x/1", "tcp://127.0.0.1:4420/nqn.x/1"));
    }

    @Test
    void explainsBadInputsAreInvalidArguments(@TempDir Path tmp) {
        fails(InvalidArgumentException.class, () -> Explain.topology(tmp.resolve("no-such-topology.xml")));
        Topology t = Explain.topology(Shapes.copy(Shapes.P4D, tmp));
        fails(InvalidArgumentException.class, () -> Explain.plan(t, "numa:0", t, "numa:0", -1, 1 << 20, 0));
        fails(InvalidArgumentException.class, () -> Explain.plan(t, "nowhere", t, "numa:0", 1, 1 << 20, 0));
        fails(InvalidArgumentException.class, () -> Explain.plan(t, "numa:0", t, "numa:0", 1, 0, 0));
    }

    @Test
    void nullArgumentsAreNullPointerExceptions() {
        assertThrows(
                NullPointerException.class, () -> a.write(src, 0, (RemoteBuffer) null, 0, 1, TransferOptions.DEFAULT));
        assertThrows(
                NullPointerException.class, () -> a.write((LocalBuffer) null, 0, dst, 0, 1, TransferOptions.DEFAULT));
        assertThrows(NullPointerException.class, () -> a.write(src, (Peer) null, "landing"));
        assertThrows(NullPointerException.class, () -> a.register(TestEngines.allocate(arena, 16), null));
        assertThrows(NullPointerException.class, () -> a.writeAll(null));
        assertThrows(NullPointerException.class, () -> a.publish("nulls", src, null));
        assertThrows(NullPointerException.class, () -> a.peer(null));
        assertThrows(NullPointerException.class, () -> a.openVolume(null));
        nothingPosted();
    }

    @Test
    void namesTheDirectoryDoesNotResolveAreUnknown() {
        fails(UnknownPeerException.class, () -> a.peer("nobody-here"));
        fails(UnknownPeerException.class, () -> a.write(src, "nobody-here", "landing"));
        fails(UnknownBufferException.class, () -> a.peer(b.name()).buffer("missing"));
        fails(UnknownBufferException.class, () -> a.unpublish("never-published"));
        nothingPosted();
    }

    @Test
    void aVolumeWithoutAProviderIsUnavailable() {
        var e = fails(
                BackendUnavailableException.class,
                () -> a.openVolume(VolumeSpec.of("tcp://127.0.0.1:4420/nqn.2026-01.io.example:x/1")));
        assertTrue(e.getMessage().contains("provider"), e.getMessage());
    }

    @Test
    void aClosedEngineIsClosed() {
        TransferEngine c = TestEngines.tcp("exc-d", 1).build();
        LocalBuffer s = c.register(TestEngines.allocate(arena, 4096));
        RemoteBuffer r = c.peer(b.name()).buffer("landing");
        c.close();
        fails(ClosedException.class, () -> c.write(s, r));
        fails(ClosedException.class, () -> c.read(s, r));
        fails(ClosedException.class, () -> c.register(TestEngines.allocate(arena, 4096)));
        fails(ClosedException.class, () -> c.publish("late", s, Access.anyPeer()));
        fails(ClosedException.class, () -> c.peer(b.name()));
        fails(ClosedException.class, () -> r.peer().buffer("landing"));
        fails(ClosedException.class, () -> c.openVolume(VolumeSpec.of("tcp://127.0.0.1:4420/nqn.x/1")));
        c.close();
    }
}
