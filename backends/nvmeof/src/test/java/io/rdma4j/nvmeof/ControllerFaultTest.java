package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.tcp.Pdu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The initiator against a scripted peer that breaks the protocol on purpose: truncated PDUs, wrong PDU types, bad
 * digests, a target that vanishes mid-I/O. Nothing may hang; every failure names what went wrong.
 */
class ControllerFaultTest {
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

    private static Throwable failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    private static MemorySegment random(Arena arena, int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return arena.allocate(n).copyFrom(MemorySegment.ofArray(b));
    }

    @Test
    void splitsLargeTransfersAnswersR2TInMaxH2CDataPiecesAndReadsWithOrWithoutCapsuleResp() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(4 << 20);
                Arena arena = Arena.ofShared()) {
            t.maxH2CData = 8192;
            t.c2hPiece = 12288;
            t.mdts = 3; // 32 KiB: a 200 KiB transfer becomes 7 commands
            for (boolean success : List.of(true, false)) {
                t.successFlag = success;
                try (Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options().withDigests(true, true))) {
                    assertEquals(32768, c.maxTransferBytes());
                    assertEquals(2, c.ioQueueCount());
                    MemorySegment small = random(arena, 2048, 1);
                    MemorySegment big = random(arena, 200 * 1024, 2);
                    c.write(1, 0, small).get(10, TimeUnit.SECONDS);
                    c.write(1, 100, big).get(10, TimeUnit.SECONDS);
                    assertArrayEquals(
                            small.toArray(ValueLayout.JAVA_BYTE), java.util.Arrays.copyOfRange(t.storage, 0, 2048));
                    assertArrayEquals(
                            big.toArray(ValueLayout.JAVA_BYTE),
                            java.util.Arrays.copyOfRange(t.storage, 100 * 512, 100 * 512 + 200 * 1024));
                    MemorySegment back = MemorySegment.ofArray(new byte[200 * 1024]); // heap buffers work as well
                    c.read(1, 100, back).get(10, TimeUnit.SECONDS);
                    assertEquals(-1, back.mismatch(big));
                }
            }
            assertEquals(2, t.shutdowns.get(), "close() shuts each controller down with CC.SHN");
        }
    }

    @Test
    void aReadWhoseMemoryIsFreedInFlightFailsAloneAndTheConnectionCarriesOn() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20)) {
            new Random(7).nextBytes(t.storage);
            // [0] counts down when the target holds a read's data back, [1] when the test lets it go
            var latches = new java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch[]>();
            t.fault = (q, pdu, b) -> {
                var l = latches.get();
                if (q > 0 && pdu instanceof Pdu.C2HData && l != null) {
                    l[0].countDown();
                    try {
                        l[1].await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return b;
            };
            for (boolean digests : List.of(false, true)) {
                try (Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options().withDigests(digests, digests))) {
                    var l = new java.util.concurrent.CountDownLatch[] {
                        new java.util.concurrent.CountDownLatch(1), new java.util.concurrent.CountDownLatch(1)
                    };
                    latches.set(l);
                    Arena arena = Arena.ofShared();
                    CompletableFuture<Void> read = c.read(1, 8, arena.allocate(16384, 4096));
                    assertTrue(l[0].await(10, TimeUnit.SECONDS), "the target never sent the read's data");
                    arena.close(); // the caller gives up on the read and frees its memory while the data is on its way
                    latches.set(null);
                    l[1].countDown();
                    Throwable e = failure(read);
                    assertInstanceOf(NvmeException.class, e);
                    assertTrue(e.getMessage().contains("destination memory was freed"), e.getMessage());
                    // the stream stayed in step: the same connection serves the next read, byte for byte
                    try (Arena ok = Arena.ofShared()) {
                        MemorySegment back = ok.allocate(16384, 4096);
                        c.read(1, 8, back).get(10, TimeUnit.SECONDS);
                        assertArrayEquals(
                                java.util.Arrays.copyOfRange(t.storage, 8 * 512, 8 * 512 + 16384),
                                back.toArray(ValueLayout.JAVA_BYTE));
                    }
                }
            }
        }
    }

    @Test
    void backToBackR2TWritesReuseTheirCommandSlots() throws Exception {
        // A command's slot is free once its completion arrived, which may be before the writer thread is done with the
        // R2T it answered: the next write on that slot must still get its data sent.
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(
                        t.target(),
                        ScriptedTarget.NQN,
                        options().withIoQueues(1).withQueueDepth(2))) {
            for (int i = 0; i < 300; i++) {
                MemorySegment data = random(arena, 16384, i);
                long lba = (i % 32) * 32L;
                c.write(1, lba, data).get(10, TimeUnit.SECONDS);
                assertArrayEquals(
                        data.toArray(ValueLayout.JAVA_BYTE),
                        java.util.Arrays.copyOfRange(t.storage, (int) lba * 512, (int) lba * 512 + 16384),
                        "write " + i);
            }
        }
    }

    @Test
    void keepsUpToQueueDepthInFlightOnEveryQueue() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(4 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            List<CompletableFuture<Void>> all = new ArrayList<>();
            MemorySegment buf = arena.allocate(200 * 4096);
            for (int i = 0; i < 200; i++) {
                all.add(c.read(1, i * 8L, buf.asSlice(i * 4096L, 4096)));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
            for (int q = 1; q <= 2; q++) {
                int max = t.maxInFlight.getOrDefault(q, new AtomicInteger()).get();
                assertTrue(max <= 8, "queue " + q + " had " + max + " commands in flight; depth is 8");
            }
        }
    }

    @Test
    void aThreadWhoseQueueIsFullSendsOnTheNext() throws Exception {
        // One thread's commands share a queue; once it has a command in every slot, the next go to the other queue
        // rather than wait. The target holds the first queue's answers, so its eight stay in flight.
        CountDownLatch hold = new CountDownLatch(1);
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            try {
                t.fault = (q, p, b) -> {
                    if (q == 1) {
                        try {
                            hold.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return b;
                };
                MemorySegment buf = arena.allocate(12 * 4096);
                List<CompletableFuture<Void>> held = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    held.add(c.read(1, i * 8L, buf.asSlice(i * 4096L, 4096)));
                }
                List<CompletableFuture<Void>> spilled = new ArrayList<>();
                for (int i = 8; i < 12; i++) {
                    spilled.add(c.read(1, i * 8L, buf.asSlice(i * 4096L, 4096)));
                }
                // they complete while the first queue is held: they went on the second
                CompletableFuture.allOf(spilled.toArray(CompletableFuture[]::new))
                        .get(10, TimeUnit.SECONDS);
                assertTrue(t.maxInFlight.containsKey(2), "the second queue saw no command");
                for (CompletableFuture<Void> f : held) {
                    assertTrue(!f.isDone(), "a read on the held queue completed before the target answered");
                }
                hold.countDown();
                CompletableFuture.allOf(held.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            } finally {
                hold.countDown();
            }
        }
    }

    @Test
    void namesLbaOutOfRangeAndInvalidNamespace() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            NamespaceInfo ns = c.namespace(1);
            assertEquals(2048, ns.blocks());
            NvmeStatusException e = assertInstanceOf(
                    NvmeStatusException.class,
                    failure(c.read(1, ns.blocks() - 1, MemorySegment.ofArray(new byte[1024]))));
            assertEquals(0, e.sct());
            assertEquals(NvmeStatusException.SC_LBA_OUT_OF_RANGE, e.sc());
            assertTrue(e.getMessage().contains("LBA Out of Range"), e.getMessage());
            assertEquals(List.of(1L), c.activeNamespaces());
            assertThrows(IllegalArgumentException.class, () -> c.read(1, 0, MemorySegment.ofArray(new byte[100])));
        }
    }

    @Test
    void wrongSubsystemNqnFailsConnectWithNamedStatus() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20)) {
            NvmeStatusException e = assertThrows(
                    NvmeStatusException.class,
                    () -> Controller.connect(t.target(), "nqn.2026-01.io.rdma4j:nope", options()));
            assertEquals(1, e.sct());
            assertEquals(0x82, e.sc());
            assertTrue(
                    e.getMessage().contains("Connect Invalid Parameters")
                            && e.getMessage().contains("SUBNQN"),
                    e.getMessage());
        }
    }

    @Test
    void truncatedPduFailsTheIoWithAProtocolError() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            t.fault = (q, p, b) -> {
                if (p instanceof Pdu.C2HData && q > 0) {
                    byte[] cut = java.util.Arrays.copyOf(b, b.length / 2);
                    return cut; // then the peer stops sending; closing comes from the next fault
                }
                return b;
            };
            CompletableFuture<Void> f = c.read(1, 0, MemorySegment.ofArray(new byte[4096]));
            // The half PDU is on the wire; the target now goes away, so the host sees the stream end inside the PDU.
            Thread.sleep(50);
            t.dropAll();
            Throwable e = failure(f);
            assertInstanceOf(NvmeProtocolException.class, e, e.toString());
            assertTrue(e.getMessage().contains("truncated C2HData"), e.getMessage());
        }
    }

    @Test
    void unexpectedPduTypeClosesTheConnectionWithTermReq() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            t.fault = (q, p, b) -> {
                if (p instanceof Pdu.C2HData d && q > 0) {
                    return io.rdma4j.nvmeof.tcp.PduCodec.encode(
                            new Pdu.R2T(d.cccid(), 1, 0, 4096), io.rdma4j.nvmeof.tcp.PduCodec.Settings.INITIAL);
                }
                return b;
            };
            Throwable e = failure(c.read(1, 0, MemorySegment.ofArray(new byte[4096])));
            assertInstanceOf(NvmeProtocolException.class, e);
            assertTrue(e.getMessage().contains("R2T for Read"), e.getMessage());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (t.hostTermReqs.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, t.hostTermReqs.get(), "the host tells the target why with an H2CTermReq");
            t.fault = (q, p, b) -> b;
            // The broken queue fails fast afterwards, and says how to recover: this thread's commands stay on it.
            for (int i = 0; i < 2; i++) {
                Throwable later = failure(c.read(1, 0, MemorySegment.ofArray(new byte[4096])));
                assertInstanceOf(NvmeConnectionException.class, later);
                assertTrue(later.getMessage().contains("reconnect()"), later.getMessage());
            }
            // Another thread's commands go on the other queue, which still works.
            AtomicReference<CompletableFuture<Void>> other = new AtomicReference<>();
            Thread.ofPlatform()
                    .start(() -> other.set(c.read(1, 0, MemorySegment.ofArray(new byte[4096]))))
                    .join();
            other.get().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void badDataDigestIsAProtocolError() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options().withDigests(true, true))) {
            t.fault = (q, p, b) -> {
                if (p instanceof Pdu.C2HData && q > 0) {
                    b[b.length - 10] ^= 0x40; // flip a data bit, keep the digest
                }
                return b;
            };
            Throwable e = failure(c.read(1, 0, MemorySegment.ofArray(new byte[4096])));
            assertInstanceOf(NvmeProtocolException.class, e);
            assertTrue(e.getMessage().contains("data digest mismatch"), e.getMessage());
        }
    }

    @Test
    void badHeaderDigestIsAProtocolErrorTheTargetIsToldOf() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options().withDigests(true, true))) {
            t.fault = (q, p, b) -> {
                if (p instanceof Pdu.C2HData && q > 0) {
                    b[9] ^= 0x01; // a header bit (the CCCID), the header digest kept
                }
                return b;
            };
            Throwable e = failure(c.read(1, 0, MemorySegment.ofArray(new byte[4096])));
            assertInstanceOf(NvmeProtocolException.class, e);
            assertTrue(e.getMessage().contains("C2HData header digest mismatch"), e.getMessage());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (t.hostTermReqs.get() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(1, t.hostTermReqs.get(), "an H2CTermReq (Header Digest Error) goes to the target");
        }
    }

    @Test
    void hostilePduLengthIsRefusedBeforeAnyDataIsRead() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            t.fault = (q, p, b) -> {
                if (p instanceof Pdu.C2HData && q > 0) {
                    io.rdma4j.nvmeof.internal.Le.put32(b, 4, Integer.MAX_VALUE); // PLEN claims 2 GiB of data
                }
                return b;
            };
            java.util.Arrays.fill(t.storage, 0, 4096, (byte) 0x5a);
            MemorySegment buf = MemorySegment.ofArray(new byte[4096]);
            Throwable e = failure(c.read(1, 0, buf));
            assertInstanceOf(NvmeProtocolException.class, e);
            assertTrue(e.getMessage().contains("this connection allows at most"), e.getMessage());
            assertEquals(-1, buf.mismatch(MemorySegment.ofArray(new byte[4096])), "nothing was read into the buffer");
        }
    }

    @Test
    void terminationByTheTargetNamesItsReason() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            t.fault = (q, p, b) -> p instanceof Pdu.C2HData && q > 0
                    ? io.rdma4j.nvmeof.tcp.PduCodec.encode(
                            new Pdu.TermReq(true, 4, 0, new byte[24]), io.rdma4j.nvmeof.tcp.PduCodec.Settings.INITIAL)
                    : b;
            Throwable e = failure(c.read(1, 0, MemorySegment.ofArray(new byte[4096])));
            assertTrue(
                    e.getMessage().contains("terminated the connection: Data Transfer Out of Range"), e.getMessage());
        }
    }

    @Test
    void targetGoneMidIoFailsOutstandingIoAndReconnectRebuildsTheQueues() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            t.answerReads = false;
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                reads.add(c.read(1, i, MemorySegment.ofArray(new byte[512])));
            }
            t.dropAll();
            for (CompletableFuture<Void> f : reads) {
                Throwable e = failure(f);
                assertInstanceOf(NvmeConnectionException.class, e, e.toString());
            }
            t.answerReads = true;
            int before = t.hostNqns.size();
            c.reconnect();
            assertEquals(before + 3, t.hostNqns.size(), "a new admin Connect and one per I/O queue");
            c.write(1, 3, MemorySegment.ofArray(new byte[512])).get(10, TimeUnit.SECONDS);
            c.read(1, 3, MemorySegment.ofArray(new byte[512])).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void commandWithoutCompletionTimesOutInsteadOfHanging() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options().withIoTimeout(Duration.ofMillis(300)))) {
            t.answerReads = false;
            Throwable e = failure(c.read(1, 0, MemorySegment.ofArray(new byte[512])));
            assertInstanceOf(NvmeConnectionException.class, e);
            assertTrue(e.getMessage().contains("I/O timeout"), e.getMessage());
        }
    }

    /** The timeout above, as the JFR event {@code io.rdma4j.NvmeCommandTimeout} read back from a recording. */
    @Test
    void commandTimeoutIsAJfrEvent(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("nvme.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.rdma4j.NvmeCommandTimeout").withoutThreshold();
            recording.start();
            try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                    Controller c = Controller.connect(
                            t.target(), ScriptedTarget.NQN, options().withIoTimeout(Duration.ofMillis(300)))) {
                t.answerReads = false;
                assertInstanceOf(
                        NvmeConnectionException.class, failure(c.read(1, 0, MemorySegment.ofArray(new byte[512]))));
            }
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertEquals(1, events.size(), events.toString());
        RecordedEvent e = events.get(0);
        assertEquals("tcp", e.getString("transport"));
        assertTrue(e.getString("command").startsWith("Read"), e.toString());
        assertEquals(Duration.ofMillis(300).toNanos(), e.getLong("timeoutNanos"));
    }

    @Test
    void sendsKeepAlivesAtHalfTheTimeout() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(
                        t.target(), ScriptedTarget.NQN, options().withKeepAlive(Duration.ofMillis(200)))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (t.keepAlives.get() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(t.keepAlives.get() >= 2, "keep-alives sent: " + t.keepAlives.get());
            assertNotEquals(null, c.info());
        }
    }

    @Test
    void discoveryReadsEveryEntryAndTheIdentityPersists() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20)) {
            DiscoveryLog log = Controller.discover(t.target(), options());
            assertEquals(2, log.entries().size());
            assertEquals(42, log.generation());
            assertEquals(ScriptedTarget.NQN, log.entries().get(1).subsystemNqn());
            assertEquals("tcp", log.entries().get(1).transportName());
            HostIdentity first = HostIdentity.persistent(home);
            assertEquals(first, HostIdentity.persistent(home));
            assertEquals(first.nqn(), t.hostNqns.get(0));
            assertEquals(first.nqn(), Files.readString(home.resolve("hostnqn")).strip());
            assertTrue(first.nqn().endsWith(first.id().toString()));
            assertEquals(
                    first.id().toString().replace("-", ""),
                    java.util.HexFormat.of().formatHex(first.idBytes()));
        }
    }

    @Test
    void refusesBuffersItCannotUse() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            Arena a = Arena.ofConfined();
            MemorySegment s = a.allocate(512);
            a.close();
            assertThrows(IllegalStateException.class, () -> c.write(1, 0, s));
            try (Arena confined = Arena.ofConfined()) {
                IllegalArgumentException e =
                        assertThrows(IllegalArgumentException.class, () -> c.read(1, 0, confined.allocate(512)));
                assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
            }
            assertThrows(
                    IllegalArgumentException.class,
                    () -> c.read(1, 0, MemorySegment.ofArray(new byte[512]).asReadOnly()));
            AtomicBoolean called = new AtomicBoolean();
            c.flush(1).thenRun(() -> called.set(true)).get(10, TimeUnit.SECONDS);
            assertTrue(called.get());
            c.writeZeroes(1, 0, 4).get(10, TimeUnit.SECONDS);
        }
    }
}
