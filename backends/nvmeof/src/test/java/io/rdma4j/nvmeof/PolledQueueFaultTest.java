package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.tcp.Pdu;
import io.rdma4j.nvmeof.tcp.PduCodec;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The polled queue against a peer that breaks the protocol on purpose, as {@link ControllerFaultTest} does for the
 * controller's own queues: every fault fails the commands in flight with {@link PolledQueue#FAILED} and a
 * {@link PolledQueue#failure()} that names it, the target is told of a protocol error with an H2CTermReq, and nothing
 * hangs. Faults hit only the polled queue's connection (queue ID 3: the controller has 2 I/O queues).
 */
class PolledQueueFaultTest {
    private static final int POLLED_QID = 3;

    @TempDir
    Path home;

    private ConnectOptions options(boolean digests) {
        return ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(2)
                .withQueueDepth(8)
                .withDigests(digests, digests)
                .withConnectTimeout(Duration.ofSeconds(5))
                .withIoTimeout(Duration.ofSeconds(5))
                .withKeepAlive(Duration.ZERO);
    }

    /** Submits {@code reads} reads of {@code size} bytes and polls until each completed; returns their statuses. */
    private static List<Integer> readAll(PolledQueue q, MemorySegment into, int reads, int size) {
        List<Integer> statuses = new ArrayList<>();
        for (int i = 0; i < reads; i++) {
            assertTrue(q.read(i * (size / 512L), into, (long) i * size, size, i));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (q.inFlight() > 0) {
            assertTrue(System.nanoTime() < deadline, "commands still in flight after 20 s");
            q.poll((tag, status) -> statuses.add(status), Duration.ofMillis(200));
        }
        return statuses;
    }

    private static void awaitTermReq(ScriptedTarget t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (t.hostTermReqs.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(1, t.hostTermReqs.get(), "the host tells the target why with an H2CTermReq");
    }

    private static void assertFailedWith(PolledQueue q, List<Integer> statuses, Class<?> type, String text) {
        assertTrue(statuses.stream().allMatch(s -> s == PolledQueue.FAILED), statuses.toString());
        NvmeException why = q.failure();
        assertNotNull(why);
        assertInstanceOf(type, why, why.toString());
        assertTrue(why.getMessage().contains(text), why.getMessage());
    }

    @Test
    void aTruncatedPduIsAProtocolError() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(false));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            t.fault = (qid, p, b) -> {
                if (p instanceof Pdu.C2HData && qid == POLLED_QID) {
                    new Thread(() -> {
                                try {
                                    Thread.sleep(50);
                                } catch (InterruptedException e) {
                                    return;
                                }
                                t.dropAll();
                            })
                            .start();
                    return Arrays.copyOf(b, b.length / 2); // half a PDU, then the target goes away
                }
                return b;
            };
            List<Integer> s = readAll(q, arena.allocate(4096), 1, 4096);
            assertFailedWith(
                    q, s, NvmeProtocolException.class, "truncated C2HData: the connection ended inside the PDU");
        }
    }

    @Test
    void anUnexpectedPduClosesTheQueueWithATermReq() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(false));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            t.fault = (qid, p, b) -> p instanceof Pdu.C2HData d && qid == POLLED_QID
                    ? PduCodec.encode(new Pdu.R2T(d.cccid(), 1, 0, 4096), PduCodec.Settings.INITIAL)
                    : b;
            List<Integer> s = readAll(q, arena.allocate(4096), 1, 4096);
            assertFailedWith(q, s, NvmeProtocolException.class, "R2T for Read");
            awaitTermReq(t);
            // the controller's own queues carry on
            t.fault = (qid, p, b) -> b;
            c.read(1, 0, arena.allocate(4096)).get(10, TimeUnit.SECONDS);
        }
    }

    /** A flipped data bit under a kept digest: through the receive buffer (4 KiB) and straight into memory (64 KiB). */
    @ParameterizedTest
    @ValueSource(ints = {4096, 65536})
    void aBadDataDigestIsAProtocolError(int size) throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofConfined();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(true));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            t.fault = (qid, p, b) -> {
                if (p instanceof Pdu.C2HData && qid == POLLED_QID) {
                    b[b.length - 10] ^= 0x40;
                }
                return b;
            };
            List<Integer> s = readAll(q, arena.allocate(size), 1, size);
            assertFailedWith(q, s, NvmeProtocolException.class, "C2HData data digest mismatch");
        }
    }

    @Test
    void aBadHeaderDigestIsAProtocolErrorTheTargetIsToldOf() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(true));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            t.fault = (qid, p, b) -> {
                if (p instanceof Pdu.C2HData && qid == POLLED_QID) {
                    b[9] ^= 0x01;
                }
                return b;
            };
            List<Integer> s = readAll(q, arena.allocate(4096), 1, 4096);
            assertFailedWith(q, s, NvmeProtocolException.class, "C2HData header digest mismatch");
            awaitTermReq(t);
        }
    }

    @Test
    void aTermReqFromTheTargetIsNamed() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(false));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            t.fault = (qid, p, b) -> p instanceof Pdu.C2HData && qid == POLLED_QID
                    ? PduCodec.encode(new Pdu.TermReq(true, 1, 0, new byte[0]), PduCodec.Settings.INITIAL)
                    : b;
            List<Integer> s = readAll(q, arena.allocate(4096), 1, 4096);
            assertFailedWith(q, s, NvmeProtocolException.class, "the target terminated the connection");
        }
    }

    @Test
    void aCommandWithoutAnAnswerTimesTheQueueOut() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options(false).withIoTimeout(Duration.ofMillis(300)));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            t.answerReads = false;
            long t0 = System.nanoTime();
            List<Integer> s = readAll(q, arena.allocate(4096 * 4), 4, 4096);
            assertFailedWith(q, s, NvmeConnectionException.class, "got no completion within 300 ms");
            assertTrue(
                    q.failure().getMessage().contains("Read(nsid=1"),
                    q.failure().getMessage());
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15), "timed out late");
        }
    }

    @Test
    void aReadWhoseMemoryIsFreedInFlightFailsAloneAndTheQueueCarriesOn() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(false));
                PolledQueue q = c.openPolledQueue(1, 8)) {
            new Random(5).nextBytes(t.storage);
            Arena doomed = Arena.ofShared();
            assertTrue(q.read(8, doomed.allocate(16384, 4096), 1));
            doomed.close(); // the caller frees the memory before polling: the data has nowhere to go
            List<Integer> s = new ArrayList<>();
            while (q.inFlight() > 0) {
                q.poll((tag, status) -> s.add(status), Duration.ofMillis(200));
            }
            assertEquals(List.of(PolledQueue.MEMORY_FREED), s);
            assertEquals(null, q.failure());
            try (Arena ok = Arena.ofShared()) {
                MemorySegment back = ok.allocate(16384, 4096);
                assertEquals(List.of(PolledQueue.OK), readAll(q, back, 1, 16384));
                assertEquals(-1L, MemorySegment.mismatch(back, 0, 16384, MemorySegment.ofArray(t.storage), 0, 16384));
            }
        }
    }

    @Test
    void closingFromTheHandlerDropsTheRest() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options(false))) {
            PolledQueue q = c.openPolledQueue(1, 8);
            MemorySegment buf = arena.allocate(8 * 4096, 4096);
            for (int i = 0; i < 8; i++) {
                assertTrue(q.read(i * 8L, buf, i * 4096L, 4096, i));
            }
            List<Integer> s = new ArrayList<>();
            while (s.isEmpty()) {
                q.poll(
                        (tag, status) -> {
                            s.add(status);
                            q.close();
                        },
                        Duration.ofMillis(200));
            }
            assertNotNull(q.failure());
            assertTrue(
                    q.failure().getMessage().contains("closed by this host"),
                    q.failure().getMessage());
            // its queue ID is free again
            try (PolledQueue again = c.openPolledQueue(1, 8)) {
                assertEquals(List.of(PolledQueue.OK), readAll(again, buf, 1, 4096));
            }
        }
    }
}
