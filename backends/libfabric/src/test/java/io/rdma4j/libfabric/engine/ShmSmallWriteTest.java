package io.rdma4j.libfabric.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.libfabric.Libfabric;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * Plain writes up to 4 KiB over shm travel through shm's inject buffers, not a {@code process_vm_writev} each (a system
 * call per write, which held 4 KiB batches to a third of fabtests): their bytes wait in shm's buffers until the target
 * polls, and the target reports no notification for them. Larger writes still land before their completion. A notifying
 * write behind small ones on the same connection finds them placed.
 */
class ShmSmallWriteTest {
    private static final long DEADLINE_NANOS = 30_000_000_000L;

    @Test
    void smallWritesWaitForTheTargetsPollAndNotifyNothing() {
        assumeTrue(Libfabric.isAvailable(), "libfabric not installed");
        BackendConfig config = new BackendConfig("shm", 1, 64);
        try (Arena arena = Arena.ofShared();
                LibfabricEngineBackend a = LibfabricEngineBackend.open(config);
                LibfabricEngineBackend b = LibfabricEngineBackend.open(config);
                BackendRegistration ra = a.register(arena.allocate(1 << 17, 4096));
                BackendRegistration rb = b.register(arena.allocate(1 << 17, 4096))) {
            int ca = connect(a, b);
            MemorySegment local = MemorySegment.ofAddress(ra.address()).reinterpret(ra.length());
            MemorySegment remote = MemorySegment.ofAddress(rb.address()).reinterpret(rb.length());
            local.fill((byte) 0x5A);
            long to = rb.remoteAddress(0);
            long key = rb.remoteKey(0);

            int first = postFirst(a, b, () -> a.postWrite(0, ca, ra.handle(), ra.address(), 4096, to, key, 1));
            // 4 KiB, then 64 bytes: each completes at the initiator with nothing placed until the target polls
            post(a, first);
            awaitLocal(a, 1);
            post(a, a.postWrite(0, ca, ra.handle(), ra.address() + 8192, 64, to + 8192, key, 2));
            awaitLocal(a, 2);
            assertEquals(0, remote.get(ValueLayout.JAVA_BYTE, 4095), "a 4 KiB write placed before the target polled");
            assertEquals(0, remote.get(ValueLayout.JAVA_BYTE, 8192), "a 64-byte write placed before the target polled");

            // 64 KiB: shm copies it straight into the target's memory before completing
            post(a, a.postWrite(0, ca, ra.handle(), ra.address() + 65536, 65536, to + 65536, key, 3));
            awaitLocal(a, 3);
            assertEquals(0x5A, remote.get(ValueLayout.JAVA_BYTE, 65536 + 65535), "a 64 KiB write not placed");

            // a notification behind the small writes: the target sees it, and only it, with their bytes placed
            post(a, a.postWriteImmediate(0, ca, ra.handle(), ra.address() + 12288, 8, to + 12288, key, 0x10001, 4));
            awaitLocal(a, 4);
            List<Integer> immediates = new ArrayList<>();
            Completions out = new Completions(64);
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while (immediates.isEmpty()) {
                int n = b.poll(0, out);
                for (int i = 0; i < n; i++) {
                    assertEquals(0, out.status[i], "target completion failed: " + out.errorText[i]);
                    if (out.kind[i] == Completions.REMOTE_IMMEDIATE) {
                        immediates.add(out.immediate[i]);
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("no notification at the target: " + b.laneError(0));
                }
            }
            for (int i = 0; i < 8; i++) {
                b.poll(0, out); // anything else the target would report comes out here
                for (int k = 0; k < out.count; k++) {
                    if (out.kind[k] == Completions.REMOTE_IMMEDIATE) {
                        immediates.add(out.immediate[k]);
                    }
                }
            }
            assertEquals(List.of(0x10001), immediates, "the target reported the small writes as notifications");
            assertEquals(-1, remote.asSlice(0, 4096).mismatch(local.asSlice(0, 4096)), "the 4 KiB write");
            assertEquals(-1, remote.asSlice(8192, 64).mismatch(local.asSlice(8192, 64)), "the 64-byte write");
        }
    }

    /**
     * The engine's first notification to a peer can carry immediate 0 (inbox 0, slot 0, vouching for lane 0): the mark
     * of a plain small write must not be that value, or the target drops the notification as one.
     */
    @Test
    void aNotificationWithImmediateZeroReachesTheTarget() {
        assumeTrue(Libfabric.isAvailable(), "libfabric not installed");
        BackendConfig config = new BackendConfig("shm", 1, 64);
        try (Arena arena = Arena.ofShared();
                LibfabricEngineBackend a = LibfabricEngineBackend.open(config);
                LibfabricEngineBackend b = LibfabricEngineBackend.open(config);
                BackendRegistration ra = a.register(arena.allocate(1 << 16, 4096));
                BackendRegistration rb = b.register(arena.allocate(1 << 16, 4096))) {
            int ca = connect(a, b);
            long to = rb.remoteAddress(0);
            long key = rb.remoteKey(0);
            post(a, postFirst(a, b, () -> a.postWriteImmediate(0, ca, ra.handle(), ra.address(), 8, to, key, 0, 1)));
            awaitLocal(a, 1);
            Completions out = new Completions(64);
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (true) {
                int n = b.poll(0, out);
                for (int i = 0; i < n; i++) {
                    if (out.kind[i] == Completions.REMOTE_IMMEDIATE) {
                        assertEquals(0, out.status[i], "target completion failed: " + out.errorText[i]);
                        assertEquals(0, out.immediate[i], "the notification's immediate");
                        return;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the notification with immediate 0 never reached the target");
                }
            }
        }
    }

    /** Connects lane 0 of {@code a} and {@code b} both ways; returns {@code a}'s connection. */
    private static int connect(LibfabricEngineBackend a, LibfabricEngineBackend b) {
        int ca = a.prepareConnection(0);
        int cb = b.prepareConnection(0);
        a.connect(0, ca, b.endpointInfo(0, cb));
        b.connect(0, cb, a.endpointInfo(0, ca));
        return ca;
    }

    /**
     * Posts the first write to a peer: shm maps the peer's region at the first post and refuses it until then, so both
     * sides poll meanwhile. Returns the post's result.
     */
    private static int postFirst(EngineBackend a, EngineBackend b, IntSupplier write) {
        Completions scratch = new Completions(64);
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        int rc;
        while ((rc = write.getAsInt()) == EngineBackend.BACK_PRESSURED) {
            a.poll(0, scratch);
            b.poll(0, scratch);
            if (System.nanoTime() > deadline) {
                throw new AssertionError("shm kept refusing the first write: " + a.laneError(0));
            }
        }
        return rc;
    }

    private static void post(EngineBackend backend, int rc) {
        assertEquals(EngineBackend.OK, rc, "post failed: " + backend.laneError(0));
    }

    private static void awaitLocal(EngineBackend backend, long context) {
        Completions out = new Completions(64);
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (true) {
            int n = backend.poll(0, out);
            for (int i = 0; i < n; i++) {
                assertEquals(0, out.status[i], "completion failed: " + out.errorText[i]);
                if (out.kind[i] == Completions.LOCAL && out.context[i] == context) {
                    return;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion for " + context + ": " + backend.laneError(0));
            }
        }
    }
}
