package io.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * Moving bytes through the SPI: lanes described, memory registered, writes with and without immediate data landing in
 * order, reads, zero-length posts, wrong remote keys, and every completion handed back exactly once at any poll
 * capacity.
 */
public abstract class DataPathConformance extends EngineBackendFixture {
    @Test
    void describesItsLanes() {
        assertFalse(initiator.lanes().isEmpty());
        for (int i = 0; i < initiator.lanes().size(); i++) {
            LaneDescriptor d = initiator.lanes().get(i);
            assertEquals(i, d.index());
            assertFalse(d.device().isEmpty());
            assertTrue(d.maxMessageBytes() >= 4096, d.toString());
        }
        assertTrue(initiator.immediateBytes() >= 4);
        assertFalse(initiator.description().isEmpty());
    }

    @Test
    void registersMemoryWithKeysOnEveryLane() {
        MemorySegment m = arena.allocate(1 << 16, 4096);
        try (BackendRegistration r = initiator.register(m)) {
            assertEquals(m.address(), r.address());
            assertEquals(m.byteSize(), r.length());
            assertTrue(r.handle() >= 0);
            for (int lane = 0; lane < initiator.lanes().size(); lane++) {
                r.remoteKey(lane);
                r.remoteAddress(lane);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> initiator.register(MemorySegment.ofArray(new byte[8])));
    }

    @Test
    void writeWithImmediateLandsBeforeTheTargetSeesIt() {
        MemorySegment src = arena.allocate(1 << 20, 4096);
        MemorySegment dst = arena.allocate(1 << 20, 4096);
        fill(src, 7);
        try (BackendRegistration s = initiator.register(src);
                BackendRegistration d = target.register(dst)) {
            for (int lane = 0; lane < initiator.lanes().size(); lane++) {
                int c = connect(lane);
                long off = lane * 1000L;
                int l = lane;
                assertEquals(
                        EngineBackend.OK,
                        post(
                                lane,
                                () -> initiator.postWrite(
                                        l,
                                        c,
                                        s.handle(),
                                        src.address(),
                                        300_000,
                                        d.remoteAddress(l) + off,
                                        d.remoteKey(l),
                                        11)));
                assertEquals(0, await(lane, 11, null));
                int[] imm = new int[2];
                assertEquals(
                        EngineBackend.OK,
                        post(
                                lane,
                                () -> initiator.postWriteImmediate(
                                        l,
                                        c,
                                        s.handle(),
                                        src.address() + 300_000,
                                        4096,
                                        d.remoteAddress(l) + off + 300_000,
                                        d.remoteKey(l),
                                        0x12345678,
                                        12)));
                assertEquals(0, await(lane, 12, imm));
                assertEquals(0x12345678, imm[1]);
                assertEquals(-1, mismatch(src, 0, dst, off, 304_096), "lane " + lane);
            }
        }
    }

    @Test
    void aVectoredWriteLandsEachPieceWhereItIsNamed() {
        int limit = initiator.writeVectorLimit(0);
        assertTrue(limit >= 1, "writeVectorLimit " + limit);
        assertTrue(initiator.writeVectorBytes(0) > 0, "writeVectorBytes " + initiator.writeVectorBytes(0));
        MemorySegment src = arena.allocate(1 << 20, 4096);
        MemorySegment dst = arena.allocate(1 << 20, 4096);
        fill(src, 13);
        try (BackendRegistration s = initiator.register(src);
                BackendRegistration d = target.register(dst)) {
            int c = connect(0);
            int n = Math.max(2, limit);
            if (limit == 1) {
                long[] none = new long[2];
                assertThrows(
                        UnsupportedOperationException.class,
                        () -> initiator.postWriteVector(0, c, s.handle(), none, none, none, 2, d.remoteKey(0), 51));
                return;
            }
            // pieces small enough to go together within any byte bound, then pieces of a page and more
            for (long unit : new long[] {16, 4096}) {
                long[] local = new long[n];
                long[] remote = new long[n];
                long[] lengths = new long[n];
                long[] at = new long[n];
                // the local pieces in reverse order of the remote ones, of different lengths, with gaps between them
                for (int i = 0; i < n; i++) {
                    lengths[i] = unit + 3L * i;
                    local[i] = src.address() + (n - 1 - i) * 65536L;
                    at[i] = i * 65536L + 4096 + i + unit;
                    remote[i] = d.remoteAddress(0) + at[i];
                }
                long context = 50 + unit;
                assertEquals(
                        EngineBackend.OK,
                        post(
                                0,
                                () -> initiator.postWriteVector(
                                        0, c, s.handle(), local, remote, lengths, n, d.remoteKey(0), context)));
                assertEquals(0, await(0, context, null));
                int[] imm = new int[2];
                assertEquals(
                        EngineBackend.OK,
                        post(
                                0,
                                () -> initiator.postWriteImmediate(
                                        0,
                                        c,
                                        s.handle(),
                                        src.address(),
                                        8,
                                        d.remoteAddress(0),
                                        d.remoteKey(0),
                                        7,
                                        context + 1)));
                assertEquals(0, await(0, context + 1, imm));
                for (int i = 0; i < n; i++) {
                    String piece = "piece " + i + " of " + n + " (" + lengths[i] + " bytes)";
                    assertEquals(-1, mismatch(src, (n - 1 - i) * 65536L, dst, at[i], lengths[i]), piece);
                    assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, at[i] - 1), "the byte before " + piece);
                    assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, at[i] + lengths[i]), "the byte after " + piece);
                }
            }
        }
    }

    @Test
    void readsPeerMemory() {
        MemorySegment remote = arena.allocate(1 << 20, 4096);
        MemorySegment local = arena.allocate(1 << 20, 4096);
        fill(remote, 9);
        try (BackendRegistration l = initiator.register(local);
                BackendRegistration r = target.register(remote)) {
            int c = connect(0);
            assertEquals(
                    EngineBackend.OK,
                    post(
                            0,
                            () -> initiator.postRead(
                                    0,
                                    c,
                                    l.handle(),
                                    local.address() + 8,
                                    65536,
                                    r.remoteAddress(0) + 4096,
                                    r.remoteKey(0),
                                    21)));
            assertEquals(0, await(0, 21, null));
            assertEquals(-1, mismatch(remote, 4096, local, 8, 65536));
        }
    }

    @Test
    void aWrongKeyNeverLandsAndNothingHangs() {
        MemorySegment src = arena.allocate(4096, 4096);
        MemorySegment dst = arena.allocate(4096, 4096);
        fill(src, 3);
        try (BackendRegistration s = initiator.register(src);
                BackendRegistration d = target.register(dst)) {
            int c = connect(0);
            int rc = post(
                    0,
                    () -> initiator.postWrite(
                            0, c, s.handle(), src.address(), 64, d.remoteAddress(0), d.remoteKey(0) ^ 0x5A5A5A, 31));
            if (rc == EngineBackend.OK) {
                // the initiator may see success (transmit complete) or an error; either way nothing may land
                await(0, 31, null);
            } else {
                assertTrue(rc < 0, "status " + rc);
            }
            for (int i = 0; i < 100; i++) {
                target.poll(0, batch);
            }
            if (enforcesKeys()) {
                assertEquals(0L, dst.get(ValueLayout.JAVA_LONG, 0), "a write with a wrong key changed the target");
            }
            // the connection either carries on or fails its next operation with an error; it never hangs or crashes
            int[] imm = new int[2];
            int rc2 = post(
                    0,
                    () -> initiator.postWriteImmediate(
                            0, c, s.handle(), src.address(), 4096, d.remoteAddress(0), d.remoteKey(0), 99, 32));
            if (rc2 == EngineBackend.OK) {
                int status = await(0, 32, imm);
                if (status == 0) {
                    assertEquals(-1, mismatch(src, 0, dst, 0, 4096));
                }
            } else {
                assertTrue(rc2 < 0 && initiator.laneError(0) != null);
            }
        }
    }

    @Test
    void zeroLengthPostCompletesOrFailsWithAReason() {
        MemorySegment src = arena.allocate(4096, 4096);
        MemorySegment dst = arena.allocate(4096, 4096);
        try (BackendRegistration s = initiator.register(src);
                BackendRegistration d = target.register(dst)) {
            int c = connect(0);
            int rc = post(
                    0,
                    () -> initiator.postWrite(
                            0, c, s.handle(), src.address(), 0, d.remoteAddress(0), d.remoteKey(0), 41));
            if (rc == EngineBackend.OK) {
                assertEquals(0, await(0, 41, null));
            } else {
                assertTrue(rc < 0, "status " + rc);
                assertNotNull(initiator.laneError(0), "a zero-length post failed without a reason");
            }
        }
    }

    @Test
    void pollHandsBackEveryCompletionExactlyOnceAtAnyCapacity() {
        MemorySegment src = arena.allocate(1 << 16, 4096);
        MemorySegment dst = arena.allocate(1 << 16, 4096);
        try (BackendRegistration s = initiator.register(src);
                BackendRegistration d = target.register(dst)) {
            int c = connect(0);
            for (int capacity : new int[] {1, 2, 3, 5, 8}) {
                postAndAwaitAll(
                        0, c, s.handle(), src.address(), d, 4 * config().queueDepth(), capacity, capacity * 1000);
            }
        }
    }

    @Test
    void aReadWithAWrongKeyFailsWithTheTransportsText() {
        assumeTrue(enforcesKeys(), "this transport does not check remote keys");
        MemorySegment local = arena.allocate(4096, 4096);
        MemorySegment remote = arena.allocate(4096, 4096);
        try (BackendRegistration l = initiator.register(local);
                BackendRegistration r = target.register(remote)) {
            int c = connect(0);
            int rc = post(
                    0,
                    () -> initiator.postRead(
                            0, c, l.handle(), local.address(), 64, r.remoteAddress(0), r.remoteKey(0) ^ 0x5A5A5A, 51));
            String reason;
            if (rc == EngineBackend.OK) {
                long deadline = System.nanoTime() + TIMEOUT_NANOS;
                reason = null;
                Completions out = new Completions(16);
                while (reason == null) {
                    assertTrue(System.nanoTime() < deadline, "no completion for a read with a wrong key within 10 s");
                    int n = initiator.poll(0, out);
                    for (int i = 0; i < n; i++) {
                        if (out.context[i] == 51) {
                            assertTrue(out.status[i] != 0, "a read with a wrong key succeeded");
                            reason = out.errorText[i];
                            assertNotNull(reason, "an error completion without the transport's text");
                        }
                    }
                    target.poll(0, out);
                }
            } else {
                assertTrue(rc < 0, "status " + rc);
                reason = initiator.laneError(0);
                assertNotNull(reason, "a failed post left no reason");
            }
            assertNativeText(reason);
            initiator.recover(0);
        }
    }
}
