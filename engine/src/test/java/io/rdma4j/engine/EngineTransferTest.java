package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two engines over libfabric tcp with four lanes each: striping, notifications, read, batch. */
class EngineTransferTest {
    static final long MIB = 1 << 20;
    static Arena arena;
    static TransferEngine a;
    static TransferEngine b;
    static MemorySegment bMem;
    static LocalBuffer bBuf;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        a = TestEngines.tcp("xfer-a", 4).build();
        b = TestEngines.tcp("xfer-b", 4).build();
        bMem = TestEngines.allocate(arena, 8 * MIB);
        bBuf = b.register(bMem);
        b.publish("landing", bBuf, Access.anyPeer());
    }

    @AfterAll
    static void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        arena.close();
    }

    @Test
    void writesAcrossFourLanesAndReassembles() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 6 * MIB + 12345);
        TestEngines.fill(src, 1);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            Plan plan = a.explain(s, 0, dst, 1000, src.byteSize());
            assertEquals(4, plan.lanes().size(), plan.toText());
            TransferResult r = a.write(s, 0, dst, 1000, src.byteSize(), TransferOptions.tag(77))
                    .join();
            assertEquals(src.byteSize(), r.bytes());
            assertEquals(List.of(0, 1, 2, 3), r.lanesUsed());
            Notification n = b.awaitTag(77, Duration.ofSeconds(10));
            assertNotNull(n, "notification 77 never arrived");
            assertEquals(a.name(), n.peer());
            assertEquals("landing", n.buffer());
            assertEquals(1000, n.offset());
            assertEquals(src.byteSize(), n.length());
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 1000, src.byteSize()));
            assertNull(b.awaitTag(77, Duration.ofMillis(200)), "the tag was delivered twice");
        }
    }

    @Test
    void readsRemoteMemoryBack() {
        MemorySegment remoteData = bMem.asSlice(4 * MIB, 2 * MIB);
        TestEngines.fill(remoteData, 5);
        MemorySegment dst = TestEngines.allocate(arena, 3 * MIB);
        try (LocalBuffer d = a.register(dst)) {
            RemoteBuffer src = a.peer(b.name()).buffer("landing");
            TransferResult r = a.read(d, 4096, src, 4 * MIB, 2 * MIB, TransferOptions.DEFAULT)
                    .join();
            assertEquals(2 * MIB, r.bytes());
            assertTrue(r.lanesUsed().size() > 1, "a 2 MiB read should stripe: " + r);
            assertEquals(-1, TestEngines.mismatch(remoteData, 0, dst, 4096, 2 * MIB));
        }
    }

    @Test
    void batchOfWritesLandsAndNotifiesEach() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 1 * MIB);
        TestEngines.fill(src, 9);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            List<TransferRequest> batch = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) {
                batch.add(new TransferRequest(
                        s, i * 128L << 10, dst, 7 * MIB + i * (128L << 10), 128 << 10, TransferOptions.tag(900 + i)));
            }
            List<Transfer> ts = a.writeAll(batch);
            for (Transfer t : ts) {
                t.join();
            }
            for (int i = 0; i < 8; i++) {
                assertNotNull(b.awaitTag(900 + i, Duration.ofSeconds(10)), "tag " + (900 + i));
            }
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 7 * MIB, 1 * MIB));
        }
    }

    @Test
    void writesAWholeBufferToAPeersBufferByName() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 2 * MIB + 17);
        TestEngines.fill(src, 21);
        try (LocalBuffer s = a.register(src)) {
            TransferResult r = a.write(s, b.name(), "landing").join();
            assertEquals(src.byteSize(), r.bytes());
            // a write without a tag completes locally; the tag behind it says the bytes are placed
            a.write(s, b.name(), "landing", TransferOptions.tag(2120)).join();
            assertNotNull(b.awaitTag(2120, Duration.ofSeconds(10)));
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 0, src.byteSize()));

            TestEngines.fill(src, 22);
            Peer peer = a.peer(b.name());
            a.write(s, peer, "landing", TransferOptions.tag(2121).withCrc32c()).join();
            Notification n = b.awaitTag(2121, Duration.ofSeconds(10));
            assertNotNull(n, "notification 2121 never arrived");
            assertEquals("landing", n.buffer());
            assertEquals(0, n.offset());
            assertEquals(Notification.Checksum.VERIFIED, n.checksum());
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 0, src.byteSize()));

            a.write(s, b.name(), "landing", TransferOptions.tag(2122)).join();
            assertNotNull(b.awaitTag(2122, Duration.ofSeconds(10)));
            a.write(s, peer, "landing").join();
            assertThrows(UnknownBufferException.class, () -> a.write(s, b.name(), "no-such-buffer"));
            assertThrows(UnknownPeerException.class, () -> a.write(s, "no-such-peer", "landing"));
        }
    }

    @Test
    void batchCompletesAsOneFutureWithEveryResultInOrder() {
        MemorySegment src = TestEngines.allocate(arena, 1 * MIB);
        TestEngines.fill(src, 31);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            List<TransferRequest> batch = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                batch.add(new TransferRequest(
                        s, i * (256L << 10), dst, 6 * MIB + i * (256L << 10), (i + 1) << 10, TransferOptions.DEFAULT));
            }
            TransferBatch ts = a.writeAll(batch);
            assertEquals(4, ts.size());
            List<TransferResult> results = ts.join();
            assertEquals(4, results.size());
            for (int i = 0; i < 4; i++) {
                assertEquals((i + 1) << 10, results.get(i).bytes(), "result " + i + " in request order");
                assertTrue(ts.get(i).future().isDone());
            }
            assertEquals(results, ts.future().join());
            assertTrue(a.writeAll(List.of()).future().isDone(), "an empty batch is done at once");

            // one cancelled transfer fails the batch's future once every transfer ended, with that failure
            TransferBatch failing = a.writeAll(List.of(
                    TransferRequest.of(s, dst, TransferOptions.DEFAULT),
                    TransferRequest.of(s, dst, TransferOptions.DEFAULT)));
            failing.get(1).cancel();
            if (failing.get(1).future().isCancelled()) {
                assertThrows(java.util.concurrent.CancellationException.class, failing::join);
            } else {
                failing.join(); // it finished before the cancel
            }
            assertTrue(failing.get(0).future().isDone());
        }
    }

    @Test
    void checksumIsVerifiedOnTheTarget() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 3 * MIB);
        TestEngines.fill(src, 13);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            a.write(s, 0, dst, 0, src.byteSize(), TransferOptions.tag(1313).withCrc32c())
                    .join();
            Notification n = b.awaitTag(1313, Duration.ofSeconds(10));
            assertNotNull(n);
            assertEquals(Notification.Checksum.VERIFIED, n.checksum());
        }
    }

    @Test
    void zeroByteWriteStillNotifies() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 4096);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            TransferResult r = a.write(s, 0, dst, 0, 0, TransferOptions.tag(0)).join();
            assertEquals(0, r.bytes());
            Notification n = b.awaitTag(0, Duration.ofSeconds(10));
            assertNotNull(n);
            assertEquals(0, n.length());
        }
    }

    @Test
    void smallTransfersTakeOneLane() {
        MemorySegment src = TestEngines.allocate(arena, 64 << 10);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            Plan p = a.explain(s, dst);
            assertEquals(1, p.lanes().size(), p.toText());
            assertTrue(p.reason().contains("below"), p.reason());
            assertEquals(1, a.write(s, dst).join().lanesUsed().size());
        }
    }

    @Test
    void threeEnginesWriteToEachOther() throws Exception {
        try (TransferEngine c = TestEngines.tcp("xfer-c", 2).build()) {
            MemorySegment cMem = TestEngines.allocate(arena, 2 * MIB);
            c.publish("landing", c.register(cMem), Access.anyPeer());
            MemorySegment aSrc = TestEngines.allocate(arena, 1 * MIB);
            MemorySegment bSrc = TestEngines.allocate(arena, 1 * MIB);
            TestEngines.fill(aSrc, 101);
            TestEngines.fill(bSrc, 202);
            try (LocalBuffer as = a.register(aSrc);
                    LocalBuffer bs = b.register(bSrc)) {
                Transfer t1 = a.write(as, 0, a.peer(c.name()).buffer("landing"), 0, 1 * MIB, TransferOptions.tag(1));
                Transfer t2 =
                        b.write(bs, 0, b.peer(c.name()).buffer("landing"), 1 * MIB, 1 * MIB, TransferOptions.tag(2));
                t1.join();
                t2.join();
                Notification n1 = c.awaitTag(1, Duration.ofSeconds(10));
                Notification n2 = c.awaitTag(2, Duration.ofSeconds(10));
                assertEquals(a.name(), n1.peer());
                assertEquals(b.name(), n2.peer());
                assertEquals(-1, TestEngines.mismatch(aSrc, 0, cMem, 0, 1 * MIB));
                assertEquals(-1, TestEngines.mismatch(bSrc, 0, cMem, 1 * MIB, 1 * MIB));
                // and back: c reads what b published
                MemorySegment back = TestEngines.allocate(arena, 1 * MIB);
                try (LocalBuffer bb = c.register(back)) {
                    c.read(bb, 0, c.peer(b.name()).buffer("landing"), 0, 1 * MIB, TransferOptions.DEFAULT)
                            .join();
                    assertEquals(-1, TestEngines.mismatch(bMem, 0, back, 0, 1 * MIB));
                }
            }
        }
    }
}
