package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CRC32C check of a write catches a byte corrupted in flight. The bytes go over a real libfabric provider; only the
 * corruption is injected ({@link CorruptingBackend}, on the writer's side, after the writer computed its CRC).
 *
 * <p>The check runs at the target when the notification arrives, after the writer's last completion. The target's
 * {@link Notification} reports the verdict, with both CRCs, the tag and the range of the named buffer; the writer reads
 * the verdict back, and its transfer completes only then: normally when verified, with
 * {@link ChecksumMismatchException} on a mismatch.
 */
class EngineChecksumTest {
    static final long CHUNK = 256 << 10;
    static final long SIZE = 3 * CHUNK;

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void byteCorruptedInFlightIsReportedAsMismatchWithBothCrcsAndTheRange(String provider) throws Exception {
        CorruptingBackend[] wire = new CorruptingBackend[1];
        boolean tcp = provider.equals("tcp");
        TransferEngine.Builder writer = tcp ? TestEngines.tcp("crc-a", 2) : TestEngines.shm("crc-a", 2);
        TransferEngine.Builder target = tcp ? TestEngines.tcp("crc-b", 2) : TestEngines.shm("crc-b", 2);
        try (Arena arena = Arena.ofShared();
                TransferEngine a = writer.chunkSize(CHUNK)
                        .backendWrapper(x -> wire[0] = new CorruptingBackend(x, CHUNK))
                        .build();
                TransferEngine b = target.chunkSize(CHUNK).build()) {
            MemorySegment landing = TestEngines.allocate(arena, 2 * SIZE);
            b.publish("landing", b.register(landing), Access.anyPeer());
            MemorySegment src = TestEngines.allocate(arena, SIZE);
            TestEngines.fill(src, 41);
            long expected = crc32c(src);
            try (LocalBuffer s = a.register(src)) {
                RemoteBuffer dst = a.peer(b.name()).buffer("landing");

                wire[0].corruptNextWrite(CHUNK / 2 + 7);
                Transfer corrupted =
                        a.write(s, 0, dst, SIZE, SIZE, TransferOptions.tag(4141).withCrc32c());
                ChecksumMismatchException e = assertThrows(
                        ChecksumMismatchException.class,
                        corrupted::join,
                        "the writer's transfer fails with the target's verdict");
                assertEquals(1, wire[0].corruptedWrites(), "one data write went out corrupted");
                assertTrue(corrupted.future().isCompletedExceptionally());

                Notification n = b.awaitTag(4141, Duration.ofSeconds(10));
                assertNotNull(n, "a mismatch is still notified, so the target is not left waiting for the tag");
                assertEquals(Notification.Checksum.MISMATCH, n.checksum(), n.toString());
                assertEquals("landing", n.buffer());
                assertEquals(SIZE, n.offset());
                assertEquals(SIZE, n.length());
                assertEquals(expected, n.expectedCrc32c(), "the writer's CRC32C, over the bytes it meant to send");
                long landed = crc32c(landing.asSlice(SIZE, SIZE));
                assertEquals(landed, n.actualCrc32c(), "the CRC32C of the bytes that landed");
                assertNotEquals(expected, landed);
                assertEquals(b.name(), e.peer());
                assertEquals(4141, e.tag());
                assertEquals("landing", e.buffer());
                assertEquals(SIZE, e.offset());
                assertEquals(SIZE, e.length());
                assertEquals(expected, e.expectedCrc32c(), "what the writer sent");
                assertEquals(landed, e.actualCrc32c(), "what landed, as the target computed it");
                assertEquals(
                        String.format(
                                "CRC32C mismatch on peer %s, tag 4141 (range %d+%d of 'landing'): "
                                        + "sent 0x%08x, landed 0x%08x",
                                b.name(), SIZE, SIZE, expected, landed),
                        e.getMessage());
                assertTrue(
                        n.toString()
                                .contains("MISMATCH (writer's CRC32C 0x" + Long.toHexString(expected) + ", ours 0x"
                                        + Long.toHexString(landed) + ")"),
                        n.toString());

                // exactly one byte differs, and it is the one flipped on the way
                long at = TestEngines.mismatch(src, 0, landing, SIZE, SIZE);
                assertTrue(at >= 0, "the corruption reached the target's memory");
                assertEquals(-1, TestEngines.mismatch(src, at + 1, landing, SIZE + at + 1, SIZE - at - 1));
                assertNull(b.awaitTag(4141, Duration.ofMillis(100)), "one notification per write");

                // the same write, clean, verifies: the check tells the two apart
                TransferResult r = a.write(
                                s, 0, dst, SIZE, SIZE, TransferOptions.tag(4242).withCrc32c())
                        .join();
                assertEquals(SIZE, r.bytes());
                Notification clean = b.awaitTag(4242, Duration.ofSeconds(10));
                assertNotNull(clean);
                assertEquals(Notification.Checksum.VERIFIED, clean.checksum(), clean.toString());
                assertEquals(expected, clean.expectedCrc32c());
                assertEquals(expected, clean.actualCrc32c());
                assertEquals(1, wire[0].corruptedWrites());
            }
        }
    }

    /** The same check for a write into published device memory, staged through host memory on the target. */
    @Test
    void byteCorruptedOnItsWayToStagedDeviceMemoryIsReportedAsMismatch() throws Exception {
        CorruptingBackend[] wire = new CorruptingBackend[1];
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("crc-host", 2)
                        .chunkSize(CHUNK)
                        .backendWrapper(x -> wire[0] = new CorruptingBackend(x, CHUNK))
                        .build();
                TransferEngine gpu = TestEngines.tcp("crc-gpu", 2)
                        .chunkSize(CHUNK)
                        .backendWrapper(x -> new DeviceTestBackend(x, new AtomicLong(), null, false))
                        .build()) {
            RecordingDeviceMemory dev =
                    new RecordingDeviceMemory(TestEngines.allocate(arena, SIZE), "0000:10:1c.0", new AtomicLong());
            MemorySegment src = TestEngines.allocate(arena, SIZE);
            TestEngines.fill(src, 43);
            long expected = crc32c(src);
            try (LocalBuffer d = gpu.register(dev);
                    LocalBuffer s = a.register(src)) {
                gpu.publish("gpu", d, Access.anyPeer());
                wire[0].corruptNextWrite(11);
                RemoteBuffer target = a.peer(gpu.name()).buffer("gpu");
                ChecksumMismatchException e = assertThrows(
                        ChecksumMismatchException.class,
                        () -> a.write(s, target, TransferOptions.tag(4343).withCrc32c())
                                .join());
                assertEquals(1, wire[0].corruptedWrites());
                Notification n = gpu.awaitTag(4343, Duration.ofSeconds(10));
                assertNotNull(n);
                assertEquals(Notification.Checksum.MISMATCH, n.checksum(), n.toString());
                assertEquals("gpu", n.buffer());
                assertEquals(expected, n.expectedCrc32c());
                // the check ran over what reached the device, one byte off from what was sent
                long onDevice = crc32c(dev.memory);
                assertEquals(onDevice, n.actualCrc32c(), n.toString());
                assertNotEquals(expected, onDevice);
                long at = TestEngines.mismatch(src, 0, dev.memory, 0, SIZE);
                assertTrue(at >= 0);
                assertEquals(-1, TestEngines.mismatch(src, at + 1, dev.memory, at + 1, SIZE - at - 1));
                assertEquals(gpu.name(), e.peer());
                assertEquals(4343, e.tag());
                assertEquals("gpu", e.buffer());
                assertEquals(0, e.offset());
                assertEquals(SIZE, e.length());
                assertEquals(expected, e.expectedCrc32c());
                assertEquals(onDevice, e.actualCrc32c(), e.getMessage());

                // the same write, clean, verifies and completes normally
                assertEquals(
                        SIZE,
                        a.write(s, target, TransferOptions.tag(4344).withCrc32c())
                                .join()
                                .bytes());
                Notification clean = gpu.awaitTag(4344, Duration.ofSeconds(10));
                assertNotNull(clean);
                assertEquals(Notification.Checksum.VERIFIED, clean.checksum(), clean.toString());
                gpu.unpublish("gpu");
            }
        }
    }

    /**
     * Many writes with a CRC in flight through a 4-slot notification ring, so slots wrap around many times while
     * verdicts are unread: each write waits for its own verdict, none is mistaken for the slot's previous one, and a
     * slot is not reused before its verdict was read. Writes without a CRC share the ring.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void manyChecksummedWritesThroughASmallRingAllCompleteVerified(String provider) throws Exception {
        int writes = 48;
        long piece = 64 << 10;
        boolean tcp = provider.equals("tcp");
        String before = System.setProperty("rdma4j.engine.inboxSlots", "4");
        try (Arena arena = Arena.ofShared();
                TransferEngine a = (tcp ? TestEngines.tcp("ring-a", 2) : TestEngines.shm("ring-a", 2)).build();
                TransferEngine b = (tcp ? TestEngines.tcp("ring-b", 2) : TestEngines.shm("ring-b", 2)).build()) {
            restore(before);
            MemorySegment landing = TestEngines.allocate(arena, writes * piece);
            b.publish("ring", b.register(landing), Access.anyPeer());
            MemorySegment src = TestEngines.allocate(arena, writes * piece);
            TestEngines.fill(src, 47);
            try (LocalBuffer s = a.register(src)) {
                RemoteBuffer dst = a.peer(b.name()).buffer("ring");
                List<Transfer> inFlight = new ArrayList<>();
                for (int i = 0; i < writes; i++) {
                    TransferOptions o = TransferOptions.tag(5000 + i).withDeadline(Duration.ofSeconds(30));
                    inFlight.add(a.write(s, i * piece, dst, i * piece, piece, i % 3 == 2 ? o : o.withCrc32c()));
                }
                for (int i = 0; i < writes; i++) {
                    assertEquals(piece, inFlight.get(i).join().bytes(), "write " + i);
                }
                for (int i = 0; i < writes; i++) {
                    Notification n = b.awaitTag(5000 + i, Duration.ofSeconds(10));
                    assertNotNull(n, "tag " + (5000 + i));
                    assertEquals(
                            i % 3 == 2 ? Notification.Checksum.NOT_REQUESTED : Notification.Checksum.VERIFIED,
                            n.checksum(),
                            n.toString());
                }
                assertEquals(-1, TestEngines.mismatch(src, 0, landing, 0, writes * piece));
            }
        } finally {
            restore(before);
        }
    }

    /**
     * A verdict that never arrives (every read of it comes back stale, while credit reads stay real) ends the write by
     * its deadline, with an error that says what it waited for; a write waiting for its verdict can be cancelled; and
     * neither keeps the slot: with a one-slot ring, a later write with a CRC still completes verified.
     */
    @Test
    void checksummedWriteWhoseVerdictNeverComesEndsByItsDeadline() throws Exception {
        CorruptingBackend[] wire = new CorruptingBackend[1];
        String before = System.setProperty("rdma4j.engine.inboxSlots", "1");
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("late-a", 2)
                        .chunkSize(CHUNK)
                        .backendWrapper(x -> wire[0] = new CorruptingBackend(x, CHUNK))
                        .build();
                TransferEngine b = TestEngines.tcp("late-b", 2).chunkSize(CHUNK).build()) {
            restore(before);
            MemorySegment landing = TestEngines.allocate(arena, SIZE);
            b.publish("late", b.register(landing), Access.anyPeer());
            MemorySegment src = TestEngines.allocate(arena, SIZE);
            TestEngines.fill(src, 53);
            try (LocalBuffer s = a.register(src)) {
                RemoteBuffer dst = a.peer(b.name()).buffer("late");
                // connect first, with a plain write: the deadline below is for the verdict, and on a loaded machine
                // the first connection alone can take longer than it
                a.write(s, dst).future().get(30, TimeUnit.SECONDS);
                wire[0].staleVerdictReads(true);
                Transfer t =
                        a.write(s, dst, TransferOptions.tag(6001).withCrc32c().withDeadline(Duration.ofSeconds(2)));
                ExecutionException failed = assertThrows(
                        ExecutionException.class,
                        () -> t.future().get(10, TimeUnit.SECONDS),
                        "ends by its deadline, never hangs");
                TransferTimeoutException e = assertInstanceOf(TransferTimeoutException.class, failed.getCause());
                assertTrue(e.getMessage().contains("waiting for the target's CRC32C verdict"), e.getMessage());
                assertEquals(SIZE, t.bytesCompleted(), "every byte landed");
                Notification n = b.awaitTag(6001, Duration.ofSeconds(10));
                assertNotNull(n);
                assertEquals(Notification.Checksum.VERIFIED, n.checksum(), "the target did judge it");

                Transfer waiting = a.write(s, dst, TransferOptions.tag(6002).withCrc32c());
                assertNotNull(b.awaitTag(6002, Duration.ofSeconds(10)), "the data and tag landed");
                Thread.sleep(50);
                assertFalse(waiting.future().isDone(), "still waiting for a verdict it cannot read");
                assertTrue(waiting.cancel());
                assertThrows(CancellationException.class, waiting::join);

                wire[0].staleVerdictReads(false);
                TransferResult r = a.write(
                                s, dst, TransferOptions.tag(6003).withCrc32c().withDeadline(Duration.ofSeconds(10)))
                        .join();
                assertEquals(SIZE, r.bytes());
                Notification clean = b.awaitTag(6003, Duration.ofSeconds(10));
                assertNotNull(clean);
                assertEquals(Notification.Checksum.VERIFIED, clean.checksum(), clean.toString());
            }
        } finally {
            restore(before);
        }
    }

    private static void restore(String before) {
        if (before == null) {
            System.clearProperty("rdma4j.engine.inboxSlots");
        } else {
            System.setProperty("rdma4j.engine.inboxSlots", before);
        }
    }

    private static long crc32c(MemorySegment s) {
        CRC32C c = new CRC32C();
        c.update(s.asByteBuffer());
        return c.getValue();
    }
}
