package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.engine.spi.LaneDescriptor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every engine backend must do, tested through the SPI alone (gRPC's AbstractTransportTest style). A backend
 * module extends this class, names its provider and a configuration, and runs it unchanged; hardware-bound backends
 * skip when {@link EngineBackendProvider#isAvailable()} is false.
 */
public abstract class EngineBackendConformance {
    /** @return the backend under test */
    protected abstract EngineBackendProvider provider();

    /** @return the configuration both ends open with (two lanes at least) */
    protected abstract BackendConfig config();

    protected EngineBackend initiator;
    protected EngineBackend target;
    protected Arena arena;
    private final Completions batch = new Completions(64);

    @BeforeEach
    void open() {
        assumeTrue(provider().isAvailable(), () -> provider().name() + " is not available here: " + provider().unavailabilityCause());
        arena = Arena.ofShared();
        initiator = provider().open(config());
        target = provider().open(config());
    }

    @AfterEach
    void close() {
        if (initiator != null) {
            initiator.close();
        }
        if (target != null) {
            target.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    /** Connects initiator lane {@code lane} to target lane {@code lane} both ways; returns the initiator's connection. */
    protected int connect(int lane) {
        int ic = initiator.prepareConnection(lane);
        int tc = target.prepareConnection(lane);
        target.connect(lane, tc, initiator.endpointInfo(lane, ic));
        initiator.connect(lane, ic, target.endpointInfo(lane, tc));
        return ic;
    }

    /** Posts until the backend takes it: BACK_PRESSURED (e.g. while a connection is being set up) means poll and retry. */
    protected int post(int lane, java.util.function.IntSupplier op) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            int rc = op.getAsInt();
            if (rc != EngineBackend.BACK_PRESSURED || System.nanoTime() > deadline) {
                return rc;
            }
            target.poll(lane, batch);
            initiator.poll(lane, batch);
        }
    }

    /** Polls both ends until the initiator sees {@code context} complete; returns its status; collects target immediates. */
    protected int await(int lane, long context, int[] immediates) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        int status = Integer.MIN_VALUE;
        while (System.nanoTime() < deadline) {
            int n = target.poll(lane, batch);
            for (int i = 0; i < n; i++) {
                if (batch.kind[i] == Completions.REMOTE_IMMEDIATE && batch.status[i] == 0 && immediates != null) {
                    immediates[0]++;
                    immediates[1] = batch.immediate[i];
                }
            }
            n = initiator.poll(lane, batch);
            for (int i = 0; i < n; i++) {
                if (batch.kind[i] == Completions.LOCAL && batch.context[i] == context) {
                    status = batch.status[i];
                }
            }
            if (status != Integer.MIN_VALUE && (immediates == null || immediates[0] > 0 || status != 0)) {
                return status;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion for context " + context + " on lane " + lane + " within 10 s");
    }

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
        TestEngines.fill(src, 7);
        try (BackendRegistration s = initiator.register(src); BackendRegistration d = target.register(dst)) {
            for (int lane = 0; lane < initiator.lanes().size(); lane++) {
                int c = connect(lane);
                long off = lane * 1000L;
                int l = lane;
                assertEquals(EngineBackend.OK, post(lane, () -> initiator.postWrite(l, c, s.handle(), src.address(), 300_000,
                        d.remoteAddress(l) + off, d.remoteKey(l), 11)));
                assertEquals(0, await(lane, 11, null));
                int[] imm = new int[2];
                assertEquals(EngineBackend.OK, post(lane, () -> initiator.postWriteImmediate(l, c, s.handle(), src.address() + 300_000, 4096,
                        d.remoteAddress(l) + off + 300_000, d.remoteKey(l), 0x12345678, 12)));
                assertEquals(0, await(lane, 12, imm));
                assertEquals(0x12345678, imm[1]);
                assertEquals(-1, TestEngines.mismatch(src, 0, dst, off, 304_096), "lane " + lane);
            }
        }
    }

    @Test
    void readsPeerMemory() {
        MemorySegment remote = arena.allocate(1 << 20, 4096);
        MemorySegment local = arena.allocate(1 << 20, 4096);
        TestEngines.fill(remote, 9);
        try (BackendRegistration l = initiator.register(local); BackendRegistration r = target.register(remote)) {
            int c = connect(0);
            assertEquals(EngineBackend.OK, post(0, () -> initiator.postRead(0, c, l.handle(), local.address() + 8, 65536,
                    r.remoteAddress(0) + 4096, r.remoteKey(0), 21)));
            assertEquals(0, await(0, 21, null));
            assertEquals(-1, TestEngines.mismatch(remote, 4096, local, 8, 65536));
        }
    }

    @Test
    void aWrongKeyNeverLandsAndNothingHangs() {
        MemorySegment src = arena.allocate(4096, 4096);
        MemorySegment dst = arena.allocate(4096, 4096);
        TestEngines.fill(src, 3);
        try (BackendRegistration s = initiator.register(src); BackendRegistration d = target.register(dst)) {
            int c = connect(0);
            int rc = post(0, () -> initiator.postWrite(0, c, s.handle(), src.address(), 64, d.remoteAddress(0), d.remoteKey(0) ^ 0x5A5A5A, 31));
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
                assertEquals(0L, dst.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0), "a write with a wrong key changed the target");
            }
            // the connection either carries on or fails its next operation with an error; it never hangs or crashes
            int[] imm = new int[2];
            int rc2 = post(0, () -> initiator.postWriteImmediate(0, c, s.handle(), src.address(), 4096, d.remoteAddress(0), d.remoteKey(0), 99, 32));
            if (rc2 == EngineBackend.OK) {
                int status = await(0, 32, imm);
                if (status == 0) {
                    assertEquals(-1, TestEngines.mismatch(src, 0, dst, 0, 4096));
                }
            } else {
                assertTrue(rc2 < 0 && initiator.laneError(0) != null);
            }
        }
    }

    @Test
    void rejectsMalformedEndpointBytesAndUnknownConnections() {
        int c = initiator.prepareConnection(0);
        assertThrows(RuntimeException.class, () -> initiator.connect(0, c, new byte[0]));
        assertThrows(RuntimeException.class, () -> initiator.connect(0, c + 1000, target.endpointInfo(0, target.prepareConnection(0))));
        MemorySegment src = arena.allocate(4096, 4096);
        try (BackendRegistration s = initiator.register(src)) {
            // posting on a connection that was never connected fails the post, it does not crash
            int rc = initiator.postWrite(0, c, s.handle(), src.address(), 64, 0, 0, 1);
            assertTrue(rc < 0, "status " + rc);
            assertTrue(initiator.laneError(0) != null);
            assertTrue(initiator.recover(0));
            assertNull(initiator.laneError(0));
        }
    }

    @Test
    void closeIsIdempotent() {
        initiator.close();
        initiator.close();
        initiator = null;
    }

    /** @return whether the transport checks remote keys (libfabric shm 1.17 does not on same-host writes) */
    protected boolean enforcesKeys() {
        return true;
    }

    /** A configuration helper for subclasses. */
    protected static BackendConfig config(String provider, int lanes, Map<String, String> options) {
        return new BackendConfig(provider, lanes, 16, options);
    }
}
