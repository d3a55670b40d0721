package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.internal.Sqe;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Asynchronous Event Requests against the scripted peer: armed after bring-up, exempt from the I/O timeout, cleared by
 * reading the named log page, re-armed, re-armed after reconnect, and a malformed completion is a protocol error. The
 * same against Linux nvmet (a namespace disabled through configfs) runs in the test VM ({@code NvmetGuestTest}).
 */
class AsyncEventTest {
    /** Notice (type 2), Namespace Attribute Changed (information 0), Changed Namespace List (log page 04h). */
    private static final int NS_CHANGED = 2 | 0 << 8 | Sqe.LID_CHANGED_NAMESPACES << 16;

    @TempDir
    Path home;

    private ConnectOptions options() {
        return ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(2)
                .withQueueDepth(8)
                .withConnectTimeout(Duration.ofSeconds(5))
                .withIoTimeout(Duration.ofSeconds(5))
                .withKeepAlive(Duration.ZERO);
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting until " + what);
            Thread.sleep(5);
        }
    }

    @Test
    void namespaceChangeIsReadFromTheChangedNamespaceLogHandedToListenersAndRearmed() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20)) {
            t.aerl = 7; // the controller takes 8; this host keeps at most 4 outstanding
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
                assertEquals(4, c.asyncEventRequests());
                await(() -> t.heldAsyncEventRequests() == 4, "4 requests are outstanding");
                assertEquals(1 << 8, t.asyncEventConfig, "Namespace Attribute Notices enabled, as OAES offers");
                List<AsyncEvent> heard = new CopyOnWriteArrayList<>();
                try (AutoCloseable l = c.onAsyncEvent(heard::add)) {
                    t.changedNamespaces = List.of(1L, 3L);
                    t.fireAsyncEvent(NS_CHANGED);
                    AsyncEvent e = c.pollAsyncEvent(Duration.ofSeconds(10));
                    assertNotNull(e, "no event within 10 s");
                    assertTrue(e.namespaceAttributeChanged(), e.toString());
                    assertEquals("Notice", e.typeName());
                    assertEquals("Namespace Attribute Changed", e.infoName());
                    assertEquals(List.of(1L, 3L), e.changedNamespaces());
                    assertFalse(e.moreThanListed());
                    await(() -> heard.size() == 1, "the listener heard it");
                    assertEquals(e, heard.get(0));
                }
                int cdw10 = t.logReads.stream()
                        .filter(x -> (x & 0xff) == Sqe.LID_CHANGED_NAMESPACES)
                        .findFirst()
                        .orElseThrow();
                assertEquals(0, cdw10 & 0x8000, "read with RAE 0, which clears the event");
                assertEquals(List.of(), t.changedNamespaces);
                await(() -> t.heldAsyncEventRequests() == 4, "the request is sent again");
                assertNull(c.pollAsyncEvent(Duration.ZERO), "one completion, one event");
                // A removed listener hears nothing more; polling still sees the event.
                t.fireAsyncEvent(1 | 1 << 8 | 2 << 16); // SMART, Temperature Threshold, SMART log
                AsyncEvent smart = c.pollAsyncEvent(Duration.ofSeconds(10));
                assertEquals("Temperature Threshold", smart.infoName());
                assertEquals(List.of(), smart.changedNamespaces());
                assertEquals(1, heard.size());
            }
        }
    }

    @Test
    void outstandingRequestsOutliveTheTimeoutAndAreArmedAgainAfterReconnect() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(),
                        ScriptedTarget.NQN,
                        options()
                                .withConnectTimeout(Duration.ofMillis(400))
                                .withIoTimeout(Duration.ofMillis(400))
                                .withKeepAlive(Duration.ofMillis(200)))) {
            await(() -> t.heldAsyncEventRequests() == 4, "4 requests are outstanding");
            int keepAlives = t.keepAlives.get();
            Thread.sleep(1200); // three times the admin queue's timeout, with the requests still unanswered
            await(() -> t.keepAlives.get() > keepAlives, "keep-alives went on");
            assertEquals(List.of(1L), c.activeNamespaces(), "the admin queue still works");
            c.read(1, 0, MemorySegment.ofArray(new byte[512])).get(10, TimeUnit.SECONDS);
            assertEquals(4, t.heldAsyncEventRequests());
            c.reconnect();
            await(() -> t.heldAsyncEventRequests() == 4, "the new admin queue has 4 requests outstanding");
            t.changedNamespaces = List.of(1L);
            t.fireAsyncEvent(NS_CHANGED);
            AsyncEvent e = c.pollAsyncEvent(Duration.ofSeconds(10));
            assertNotNull(e, "no event after reconnect");
            assertEquals(List.of(1L), e.changedNamespaces());
        }
    }

    @Test
    void malformedCompletionClosesTheConnectionWithAProtocolError() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            await(() -> t.heldAsyncEventRequests() == 4, "4 requests are outstanding");
            assertEquals(512, c.namespace(1).blockSize()); // cached: reads below need no admin command
            t.fireAsyncEvent(3 | 4 << 16); // event type 3 is reserved
            // The admin queue fails last, after every I/O queue.
            await(
                    () -> {
                        try {
                            c.activeNamespaces();
                            return false;
                        } catch (NvmeException x) {
                            return true;
                        }
                    },
                    "the admin queue fails");
            NvmeException admin = assertThrows(NvmeException.class, c::activeNamespaces);
            assertInstanceOf(NvmeProtocolException.class, admin, admin.toString());
            for (int i = 0; i < 2; i++) { // one read per I/O queue
                ExecutionException x = assertThrows(
                        ExecutionException.class,
                        () -> c.read(1, 0, MemorySegment.ofArray(new byte[512])).get(10, TimeUnit.SECONDS));
                assertTrue(
                        x.getCause().getMessage().contains("reserved event type 3")
                                && x.getCause().getMessage().contains("reconnect()"),
                        x.getCause().getMessage());
            }
            assertNull(c.pollAsyncEvent(Duration.ZERO), "a malformed completion is no event");
            c.reconnect();
            c.read(1, 0, MemorySegment.ofArray(new byte[512])).get(10, TimeUnit.SECONDS);
            await(() -> t.heldAsyncEventRequests() == 4, "armed again after reconnect");
        }
    }
}
