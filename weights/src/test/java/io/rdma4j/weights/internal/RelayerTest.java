package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A relaying subscriber's forwards over libfabric shm between two engines: strided runs land shifted at the next
 * subscriber, and a forward that fails (to an unknown subscriber, or to one that left after its buffers were looked up)
 * is counted and said, never dropped without a trace.
 */
class RelayerTest {
    private static final long SLOT = 64 << 10;

    /** Four runs of 4 KiB, every 8 KiB from offset 0, to be forwarded 1 KiB further on at each target. */
    private static Wire.InPiece piece(String... targets) {
        return new Wire.InPiece(
                0,
                4096,
                4,
                8192,
                java.util.Arrays.stream(targets)
                        .map(t -> new Wire.OutForward(t, 1, 3, 1024))
                        .toList());
    }

    @Test
    void forwardsStridedRunsShiftedToTheNextSubscriber() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine a = ShmEngines.engine("relay-a", dir.target());
                TransferEngine b = ShmEngines.engine("relay-b", dir.target())) {
            MemorySegment src = arena.allocate(SLOT, 4096);
            for (long i = 0; i < SLOT; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
            }
            MemorySegment dst = arena.allocate(SLOT, 4096);
            b.publish("slot0", b.register(dst), Access.anyPeer());
            Relayer r = new Relayer(a, new LocalBuffer[] {a.register(src)}, "slot", Duration.ofSeconds(20));
            var landed = b.notifications();
            r.forward(new ConcurrentHashMap<>(), piece("relay-b"), 0, 5, false, 0x5_0000L);
            // the piece's tag (piece number 3 in the low 16 bits) arrives once every run landed
            assertEquals(0x5_0003L, tag(landed.poll(Duration.ofSeconds(20))));
            for (int run = 0; run < 4; run++) {
                for (long i = 0; i < 4096; i++) {
                    long at = run * 8192L + i;
                    assertEquals(
                            src.get(ValueLayout.JAVA_BYTE, at),
                            dst.get(ValueLayout.JAVA_BYTE, at + 1024),
                            "run " + run + " byte " + i);
                }
            }
            assertEquals(0, dst.get(ValueLayout.JAVA_BYTE, 1024 + 4096), "bytes between the runs stay untouched");
            r.stop(Duration.ofSeconds(5));
            assertEquals(0, r.failures());
            assertNull(r.lastFailure());
        }
    }

    @Test
    void aForwardToAnUnknownSubscriberIsCountedAndSaid() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine a = ShmEngines.engine("relay-a", dir.target())) {
            Relayer r = new Relayer(
                    a, new LocalBuffer[] {a.register(arena.allocate(SLOT, 4096))}, "slot", Duration.ofSeconds(20));
            r.forward(new ConcurrentHashMap<>(), piece("nobody"), 0, 7, false, 0x7_0000L);
            awaitFailures(r, 1);
            assertTrue(r.lastFailure().contains("version 7"), r.lastFailure());
            assertTrue(r.lastFailure().contains("to nobody"), r.lastFailure());
            r.stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void aForwardToASubscriberThatLeftIsCountedAndItsTargetLookedUpAgain() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine a = ShmEngines.engine("relay-a", dir.target())) {
            Map<String, RemoteBuffer[]> targets = new ConcurrentHashMap<>();
            Relayer r = new Relayer(
                    a, new LocalBuffer[] {a.register(arena.allocate(SLOT, 4096))}, "slot", Duration.ofSeconds(2));
            try (TransferEngine b = ShmEngines.engine("relay-b", dir.target());
                    Arena bArena = Arena.ofShared()) {
                b.publish("slot0", b.register(bArena.allocate(SLOT, 4096)), Access.anyPeer());
                var landed = b.notifications();
                r.forward(targets, piece("relay-b"), 0, 1, false, 0x1_0000L);
                assertEquals(0x1_0003L, tag(landed.poll(Duration.ofSeconds(20))));
            }
            assertEquals(List.of("relay-b"), List.copyOf(targets.keySet()), "the target's buffers are kept");
            // relay-b is gone, its buffers with it: the forward goes to the kept lookup, and its write fails
            r.forward(targets, piece("relay-b"), 0, 2, false, 0x2_0000L);
            awaitFailures(r, 1);
            assertTrue(r.lastFailure().contains("version 2"), r.lastFailure());
            assertTrue(r.lastFailure().contains("to relay-b"), r.lastFailure());
            assertTrue(targets.isEmpty(), "a failed target is looked up again for the next version");
            r.stop(Duration.ofSeconds(5));
        }
    }

    private static long tag(io.rdma4j.engine.Notification n) {
        assertTrue(n != null, "the forward's tag did not arrive in 20 s");
        return n.tag();
    }

    private static void awaitFailures(Relayer r, long n) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (r.failures() < n && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(n, r.failures(), "failed forwards counted");
    }
}
