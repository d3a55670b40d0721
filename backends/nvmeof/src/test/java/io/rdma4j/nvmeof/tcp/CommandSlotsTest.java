package io.rdma4j.nvmeof.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue.Data;
import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The command slot table alone: no socket, no threads. */
class CommandSlotsTest {
    private static final PduCodec.Settings TX = new PduCodec.Settings(false, false, 0);
    private static final long NO_TIMEOUT = 0;

    private static byte[] flush() {
        return Sqe.flush(1);
    }

    @Test
    void givesEachCommandItsOwnIdentifierUpToTheDepth() {
        CommandSlots t = new CommandSlots(4, NO_TIMEOUT, 0, TX);
        Set<Integer> cids = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            byte[] sqe = flush();
            CommandSlot s = t.acquire(sqe, Data.NONE, "Flush " + i, true, new CompletableFuture<>());
            assertNotNull(s);
            assertTrue(s.busy);
            assertEquals(s.cid, (sqe[2] & 0xff) | (sqe[3] & 0xff) << 8, "the CID is written into the command");
            assertSame(s, t.inFlight(s.cid));
            cids.add(s.cid);
        }
        assertEquals(Set.of(0, 1, 2, 3), cids);
        assertEquals(0, t.free());
    }

    @Test
    void reusesAFreedIdentifierAndHandsBackTheFuture() {
        CommandSlots t = new CommandSlots(2, NO_TIMEOUT, 0, TX);
        CompletableFuture<Cqe> f = new CompletableFuture<>();
        CommandSlot s = t.acquire(flush(), Data.NONE, "Flush", true, f);
        int generation = s.generation;
        CommandSlots.Released out = new CommandSlots.Released();
        t.release(s, out);
        assertSame(f, out.future);
        assertNull(out.next);
        assertFalse(s.busy);
        assertNull(t.inFlight(s.cid));
        assertNull(s.future, "a freed slot keeps no reference to the command");
        CommandSlot again = t.acquire(flush(), Data.NONE, "Flush again", true, new CompletableFuture<>());
        assertSame(s, again, "the identifier freed last is handed out first");
        assertNotEquals(generation, again.generation, "a reused slot is told apart from its earlier command");
    }

    @Test
    void queuesCommandsBeyondTheDepthAndStartsThemInFreedSlots() {
        CommandSlots t = new CommandSlots(1, NO_TIMEOUT, 0, TX);
        CommandSlot first = t.acquire(flush(), Data.NONE, "first", true, new CompletableFuture<>());
        CompletableFuture<Cqe> second = new CompletableFuture<>();
        CompletableFuture<Cqe> third = new CompletableFuture<>();
        assertNull(t.acquire(flush(), Data.NONE, "second", true, second), "exhausted: the command waits");
        assertNull(t.acquire(flush(), Data.NONE, "third", true, third));
        assertEquals(2, t.waiting());
        assertFalse(second.isDone());

        CommandSlots.Released out = new CommandSlots.Released();
        t.release(first, out);
        assertNotNull(out.next);
        assertSame(second, out.next.future, "waiting commands start in arrival order");
        assertEquals("second", out.next.what());
        assertEquals(1, t.waiting());
        t.release(out.next, out);
        assertSame(second, out.future);
        assertSame(third, out.next.future);
        assertEquals(0, t.waiting());
    }

    @Test
    void failingFailsBusyAndWaitingCommandsAndEveryLaterOne() throws Exception {
        CommandSlots t = new CommandSlots(1, NO_TIMEOUT, 0, TX);
        CompletableFuture<Cqe> busy = new CompletableFuture<>();
        CompletableFuture<Cqe> waiting = new CompletableFuture<>();
        CommandSlot s = t.acquire(flush(), Data.NONE, "busy", true, busy);
        t.acquire(flush(), Data.NONE, "waiting", true, waiting);
        NvmeConnectionException why = new NvmeConnectionException("gone");
        List<CompletableFuture<Cqe>> victims = t.failAll(why);
        assertEquals(List.of(busy, waiting), victims);
        assertNull(t.failAll(new NvmeConnectionException("again")), "failing twice does nothing");
        assertSame(why, t.failure());
        assertNull(t.inFlight(s.cid));

        CommandSlots.Released out = new CommandSlots.Released();
        t.release(s, out); // a completion that raced with the failure
        assertNull(out.future, "the failure owns the command's future");
        assertEquals(0, t.free(), "a failed queue hands out no identifier again");

        CompletableFuture<Cqe> later = new CompletableFuture<>();
        assertNull(t.acquire(flush(), Data.NONE, "later", true, later));
        ExecutionException e = assertThrows(ExecutionException.class, () -> later.get(1, TimeUnit.SECONDS));
        assertSame(why, e.getCause());
    }

    @Test
    void namesATimedCommandPastItsDeadlineButNeverAnUntimedOne() {
        long timeout = TimeUnit.MILLISECONDS.toNanos(10);
        CommandSlots t = new CommandSlots(2, timeout, 0, TX);
        t.acquire(Sqe.asyncEventRequest(), Data.NONE, "Asynchronous Event Request", false, new CompletableFuture<>());
        CommandSlot read = t.acquire(flush(), Data.NONE, "Flush(nsid=1)", true, new CompletableFuture<>());
        long now = System.nanoTime();
        assertNull(t.late(now), "nothing is late before its deadline");
        assertEquals("Flush(nsid=1)", t.late(now + 2 * timeout));
        t.release(read, new CommandSlots.Released());
        assertNull(t.late(now + 2 * timeout), "an untimed command is never late");
        t.failAll(new NvmeConnectionException("gone"));
        assertNull(t.late(Long.MAX_VALUE), "a failed queue reports nothing late");
    }

    @Test
    void putsSmallWritesInTheCapsuleAndLargerOnesBehindR2T() {
        CommandSlots t = new CommandSlots(2, NO_TIMEOUT, 4096, TX);
        byte[] data = new byte[8192];
        CommandSlot small = t.acquire(
                Sqe.readWrite(true, 1, 0, 1),
                new Data(MemorySegment.ofArray(data), 0, 4096, true),
                null,
                true,
                new CompletableFuture<>());
        assertTrue(small.inCapsule);
        assertEquals(72 + 4096, small.capsule.getInt(4), "PLEN counts the in-capsule data");
        CommandSlot large = t.acquire(
                Sqe.readWrite(true, 1, 0, 2),
                new Data(MemorySegment.ofArray(data), 0, 8192, true),
                null,
                true,
                new CompletableFuture<>());
        assertFalse(large.inCapsule);
        assertEquals(72, large.capsule.getInt(4));
    }
}
