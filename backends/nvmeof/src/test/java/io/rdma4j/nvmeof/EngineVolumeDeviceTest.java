package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.DeviceTestBackend;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.RecordingDeviceMemory;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.tcp.Pdu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * GPU memory to and from remote NVMe through the engine, on the host: "device" memory is the engine's recording double
 * over host memory, registered either staged (the libfabric backend cannot take CUDA memory here) or directly (a
 * backend standing in for GPUDirect). Volumes are two uneven scripted NVMe/TCP targets. Checked: the bytes land where
 * the stripe map says, the producer is synced and the range copied to host before the first I/O reaches a target, a
 * read's pieces are copied to the device as they arrive, overlapping the I/O still moving, all before the future
 * completes, and a failed or cancelled read puts on the device only bytes that arrived.
 */
class EngineVolumeDeviceTest {
    private static final String PCI = "0000:3b:00.0";
    private static final long UNIT = 64 << 10;

    @TempDir
    static Path home;

    private static final AtomicLong SEQ = new AtomicLong();
    private static TransferEngine staged;
    private static TransferEngine direct;

    @BeforeAll
    static void engines() {
        long pid = ProcessHandle.current().pid();
        staged = TransferEngine.builder()
                .name("vol-dev-staged-" + pid)
                .backend("libfabric")
                .provider("tcp")
                .nicFilter("lo")
                .build();
        direct = TransferEngine.builder()
                .name("vol-dev-direct-" + pid)
                .backend("libfabric")
                .provider("tcp")
                .nicFilter("lo")
                .backendWrapper(b -> new DeviceTestBackend(b, SEQ, null, true))
                .build();
    }

    @AfterAll
    static void close() {
        staged.close();
        direct.close();
    }

    private static TransferEngine engine(boolean directly) {
        return directly ? direct : staged;
    }

    private static VolumeSpec spec(ScriptedTarget... targets) {
        String[] all = new String[targets.length];
        for (int i = 0; i < targets.length; i++) {
            all[i] = "tcp://127.0.0.1:" + targets[i].server.getLocalPort() + "/" + ScriptedTarget.NQN + "/1";
        }
        return VolumeSpec.of(all)
                .withOption("identityDir", home.toString())
                .withOption("ioQueues", "2")
                .withOption("queueDepth", "8")
                .withOption("keepAliveMs", "0")
                .withOption("ioTimeoutMs", "10000")
                .withStripeUnit(UNIT);
    }

    private static MemorySegment random(Arena arena, long n, long seed) {
        MemorySegment s = arena.allocate(n, 4096);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        return s;
    }

    /** Checks that {@code copies} cover {@code [from, from + length)} of the device, each byte once. */
    private static void assertCoveredOnce(List<RecordingDeviceMemory.Event> copies, long from, long length) {
        List<RecordingDeviceMemory.Event> sorted = copies.stream()
                .sorted(java.util.Comparator.comparingLong(RecordingDeviceMemory.Event::offset))
                .toList();
        long at = from;
        for (RecordingDeviceMemory.Event c : sorted) {
            assertEquals(at, c.offset(), "each byte copied once, in pieces: " + sorted);
            at += c.length();
        }
        assertEquals(from + length, at, "the whole range copied: " + sorted);
    }

    /** Every byte of {@code device} is either {@code untouched} or the byte {@code stored} holds there. */
    private static void assertOnlyWholeBytesLanded(MemorySegment device, MemorySegment stored, byte untouched) {
        for (long i = 0; i < device.byteSize(); i++) {
            byte d = device.get(ValueLayout.JAVA_BYTE, i);
            if (d != untouched && d != stored.get(ValueLayout.JAVA_BYTE, i)) {
                throw new AssertionError("device byte " + i + " is " + d + ", neither untouched nor what was read");
            }
        }
    }

    /** Records, on the device's sequence, the first and the last PDU a target sends on an I/O queue. */
    private static void watchIo(ScriptedTarget t, AtomicLong first, AtomicLong last) {
        t.fault = (qid, pdu, bytes) -> {
            if (qid >= 1) {
                long s = SEQ.incrementAndGet();
                first.compareAndSet(-1, s);
                last.set(s);
            }
            return bytes;
        };
    }

    @ParameterizedTest(name = "direct registration: {0}")
    @ValueSource(booleans = {false, true})
    void deviceMemoryGoesToTheStripesThroughHostAndComesBackBeforeTheReadCompletes(boolean directly) throws Exception {
        TransferEngine engine = engine(directly);
        try (ScriptedTarget a = new ScriptedTarget(4 << 20);
                ScriptedTarget b = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a, b))) {
            long start = 3 * UNIT
                    - 1024; // two blocks before a unit boundary, and past the 2 MiB zone boundary into target a alone
            long len = 3L << 20;
            MemorySegment original = random(arena, len + 4096, directly ? 11 : 12);
            MemorySegment gpu = arena.allocate(len + 4096, 4096);
            MemorySegment.copy(original, 0, gpu, 0, gpu.byteSize());
            RecordingDeviceMemory device = new RecordingDeviceMemory(gpu, PCI, SEQ);
            AtomicLong first = new AtomicLong(-1);
            AtomicLong last = new AtomicLong(-1);
            watchIo(a, first, last);
            watchIo(b, first, last);
            VolumeExtent e = v.extent(start / 512, len);
            try (LocalBuffer buf = engine.register(device)) {
                assertEquals(directly, buf.toString().contains("registered directly"), buf.toString());
                Plan plan = engine.explain(buf, 4096, e, 0, len);
                assertTrue(plan.reason().contains("staged through host memory"), plan.reason());
                assertTrue(
                        plan.reason().contains("is NVMe/TCP, whose data goes through the CPU's sockets"),
                        "the plan says why the device memory is not moved directly: " + plan.reason());
                assertTrue(
                        plan.reason()
                                .contains("copies each piece to "
                                        + (directly
                                                ? "a host copy of " + len + " bytes made for the transfer"
                                                : "the registration's staging copy")),
                        plan.reason());

                engine.write(buf, 4096, e, 0, len, TransferOptions.DEFAULT)
                        .future()
                        .get(60, TimeUnit.SECONDS);
                assertTrue(
                        device.first("beforeNicRead") < device.first("copyToHost"),
                        "producer synced before the copy: " + device.events);
                assertTrue(
                        device.first("copyToHost") < first.get(),
                        "the first piece copied to host before the first I/O reached a target: " + device.events);
                List<RecordingDeviceMemory.Event> copies = device.named("copyToHost").stream()
                        .sorted(java.util.Comparator.comparingLong(RecordingDeviceMemory.Event::offset))
                        .toList();
                long copied = 4096;
                for (RecordingDeviceMemory.Event c : copies) {
                    assertEquals(copied, c.offset(), "each byte copied once, in pieces: " + copies);
                    copied += c.length();
                }
                assertEquals(4096 + len, copied, "the whole range copied: " + copies);
                assertTrue(
                        copies.stream().anyMatch(c -> c.seq() > first.get()),
                        "pieces copied while earlier ones were in flight, not all before the first I/O: " + copies);
                for (long vOff = start; vOff < start + len; vOff += 512) {
                    long u = vOff / UNIT;
                    ScriptedTarget holder = u < 32 ? (u % 2 == 0 ? a : b) : a;
                    long memberUnit = u < 32 ? u / 2 : 16 + (u - 32);
                    long at = memberUnit * UNIT + vOff % UNIT;
                    assertEquals(
                            original.get(ValueLayout.JAVA_LONG_UNALIGNED, 4096 + vOff - start),
                            MemorySegment.ofArray(holder.storage).get(ValueLayout.JAVA_LONG_UNALIGNED, at),
                            "volume byte " + vOff + " belongs at byte " + at + " of target "
                                    + (holder == a ? "a" : "b"));
                }

                gpu.fill((byte) 0);
                device.events.clear();
                Transfer r = engine.read(buf, 4096, e, 0, len, TransferOptions.DEFAULT);
                // runs when the future completes (or at once if it already has): the bytes must be on the device by
                // then
                CompletableFuture<Boolean> heldAtCompletion = r.future()
                        .thenApply(
                                x -> MemorySegment.mismatch(original, 4096, 4096 + len, gpu, 4096, 4096 + len) == -1);
                assertTrue(
                        heldAtCompletion.get(60, TimeUnit.SECONDS),
                        "the device held the volume's bytes when the read's future completed");
                assertEquals(
                        -1,
                        MemorySegment.mismatch(original, 4096, 4096 + len, gpu, 4096, 4096 + len),
                        "read back differently");
                List<RecordingDeviceMemory.Event> in = device.named("copyFromHost");
                assertCoveredOnce(in, 4096, len);
                assertTrue(in.size() > 1, "copied to the device piece by piece: " + in);
                assertTrue(
                        in.stream().anyMatch(c -> c.seq() < last.get()),
                        "pieces copied to the device while later ones were still moving, not all after the last I/O: "
                                + device.events);
                assertEquals(
                        0,
                        device.named("copyToHost").size()
                                + device.named("beforeNicRead").size(),
                        "a read does not read the device");
            }
        }
    }

    @ParameterizedTest(name = "direct registration: {0}")
    @ValueSource(booleans = {false, true})
    void aFailedOrCancelledReadPutsOnlyBytesThatArrivedOnTheDevice(boolean directly) throws Exception {
        TransferEngine engine = engine(directly);
        try (ScriptedTarget a = new ScriptedTarget(2 << 20);
                ScriptedTarget b = new ScriptedTarget(2 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a, b))) {
            long len = 2L << 20;
            MemorySegment stored = random(arena, len, 21);
            try (LocalBuffer host = engine.register(stored)) {
                engine.write(host, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
            }
            MemorySegment gpu = arena.allocate(len, 4096);
            gpu.fill((byte) 0x5a);
            RecordingDeviceMemory device = new RecordingDeviceMemory(gpu, PCI, SEQ);
            b.successFlag = false; // reads end with a response capsule, which the fault below turns into an error
            AtomicInteger responses = new AtomicInteger();
            b.fault = (qid, pdu, bytes) -> {
                if (qid >= 1 && pdu instanceof Pdu.CapsuleResp && responses.incrementAndGet() == 2) {
                    byte[] bad = bytes.clone();
                    bad[8 + 14] = 0x02; // status: DNR, SCT 2 (media), SC 81h: Unrecovered Read Error
                    bad[8 + 15] = (byte) 0x85;
                    return bad;
                }
                return bytes;
            };
            try (LocalBuffer buf = engine.register(device)) {
                Transfer t = engine.read(buf, v.extent(0, len));
                CompletionException ce =
                        assertThrows(CompletionException.class, () -> t.future().join());
                TransferException e = assertInstanceOf(TransferException.class, ce.getCause());
                assertTrue(e.getMessage().contains("Unrecovered Read Error"), e.getMessage());
                // pieces that arrived before the failure may have been copied on: never a byte that did not arrive
                assertOnlyWholeBytesLanded(gpu, stored, (byte) 0x5a);
                int copiedBeforeFailure = device.named("copyFromHost").size();

                b.fault = (qid, pdu, bytes) -> bytes;
                engine.read(buf, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                assertEquals(
                        -1,
                        MemorySegment.mismatch(stored, 0, len, gpu, 0, len),
                        "the buffer still reads once the target answers");
                assertTrue(device.named("copyFromHost").size() > copiedBeforeFailure, device.events.toString());

                gpu.fill((byte) 0x5a);
                a.answerReads = false; // its pieces stay in flight until the volume closes
                Transfer c = engine.read(buf, v.extent(0, len));
                assertTrue(c.cancel());
                assertThrows(CancellationException.class, c::join);
                assertOnlyWholeBytesLanded(gpu, stored, (byte) 0x5a);
            }
        }
    }

    @ParameterizedTest(name = "direct registration: {0}")
    @ValueSource(booleans = {false, true})
    void aFailedCopyToHostIssuesNothing(boolean directly) throws Exception {
        TransferEngine engine = engine(directly);
        try (ScriptedTarget a = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a))) {
            MemorySegment gpu = random(arena, 64 << 10, 31);
            RecordingDeviceMemory device = new RecordingDeviceMemory(gpu, PCI, SEQ);
            try (LocalBuffer buf = engine.register(device)) {
                device.failCopies = true;
                TransferException e =
                        assertThrows(TransferException.class, () -> engine.write(buf, v.extent(0, 64 << 10)));
                assertTrue(
                        e.getMessage().contains("nothing was issued")
                                && e.getMessage().contains("injected device copy failure"),
                        e.getMessage());
                assertEquals(
                        0,
                        a.maxInFlight.getOrDefault(1, new AtomicInteger()).get()
                                + a.maxInFlight
                                        .getOrDefault(2, new AtomicInteger())
                                        .get(),
                        "no I/O command reached the target");
                device.failCopies = false;
                engine.write(buf, v.extent(0, 64 << 10)).future().get(60, TimeUnit.SECONDS);
                assertEquals(
                        -1, MemorySegment.mismatch(gpu, 0, 64 << 10, MemorySegment.ofArray(a.storage), 0, 64 << 10));
            }
        }
    }

    /**
     * A write larger than the pieces a volume keeps in flight goes through a bounce pool of that many piece-sized
     * slots, not a host copy of the whole range; a device copy that fails midway fails the transfer by name, the pieces
     * already issued finish, and the next write goes through.
     */
    @org.junit.jupiter.api.Test
    void aLargeWriteGoesThroughABouncePoolAndAFailedCopyMidwayFailsItByName() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(8 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = direct.openVolume(spec(a))) {
            long len = 6L << 20;
            MemorySegment gpu = random(arena, len, 51);
            RecordingDeviceMemory device = new RecordingDeviceMemory(gpu, PCI, SEQ);
            try (LocalBuffer buf = direct.register(device)) {
                Plan plan = direct.explain(buf, 0, v.extent(0, len), 0, len);
                assertTrue(plan.reason().contains("copies each piece to a bounce pool of 2 x 1024 KiB"), plan.reason());
                direct.write(buf, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                assertEquals(-1, MemorySegment.mismatch(gpu, 0, len, MemorySegment.ofArray(a.storage), 0, len));
                assertEquals(6, device.named("copyToHost").size(), device.events.toString());

                device.failAfterCopies.set(3);
                java.util.Arrays.fill(a.storage, (byte) 0);
                Transfer t = direct.write(buf, v.extent(0, len));
                CompletionException ce =
                        assertThrows(CompletionException.class, () -> t.future().join());
                TransferException e = assertInstanceOf(TransferException.class, ce.getCause());
                assertTrue(
                        e.getMessage()
                                        .contains(
                                                "copying the device memory to host failed (range bytes 3145728..4194304)")
                                && e.getMessage().contains("pieces already issued were left to finish")
                                && e.getMessage().contains("injected device copy failure"),
                        e.getMessage());
                // the future failed at once; the three pieces issued before the failed copy finish on their own
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (MemorySegment.mismatch(gpu, 0, 3L << 20, MemorySegment.ofArray(a.storage), 0, 3L << 20) != -1) {
                    assertTrue(System.nanoTime() < deadline, "the pieces issued before the failed copy never landed");
                    Thread.sleep(10);
                }

                device.failAfterCopies.set(-1);
                direct.write(buf, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                assertEquals(-1, MemorySegment.mismatch(gpu, 0, len, MemorySegment.ofArray(a.storage), 0, len));
            }
        }
    }

    /**
     * A read larger than the pieces a volume keeps in flight lands in a bounce pool of that many piece-sized slots, not
     * a host copy of the whole range, and each piece goes to the device as it arrives; a copy to the device that fails
     * midway fails the read by name, and the next read goes through.
     */
    @org.junit.jupiter.api.Test
    void aLargeReadGoesThroughABouncePoolPieceByPieceAndAFailedCopyFailsItByName() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(8 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = direct.openVolume(spec(a))) {
            long len = 6L << 20;
            MemorySegment stored = random(arena, len, 61);
            MemorySegment.copy(stored, 0, MemorySegment.ofArray(a.storage), 0, len);
            MemorySegment gpu = arena.allocate(len, 4096);
            RecordingDeviceMemory device = new RecordingDeviceMemory(gpu, PCI, SEQ);
            AtomicLong first = new AtomicLong(-1);
            AtomicLong last = new AtomicLong(-1);
            watchIo(a, first, last);
            try (LocalBuffer buf = direct.register(device)) {
                Plan plan = direct.explain(buf, 0, v.extent(0, len), 0, len);
                assertTrue(
                        plan.reason().contains("a read lands each piece in a bounce pool of 2 x 1024 KiB"),
                        plan.reason());
                direct.read(buf, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                assertEquals(-1, MemorySegment.mismatch(stored, 0, len, gpu, 0, len), "read back differently");
                List<RecordingDeviceMemory.Event> in = device.named("copyFromHost");
                assertEquals(6, in.size(), device.events.toString());
                assertCoveredOnce(in, 0, len);
                assertTrue(
                        in.stream().anyMatch(c -> c.seq() < last.get()),
                        "pieces copied to the device while later ones were still moving: " + device.events);

                gpu.fill((byte) 0);
                device.failAfterCopiesToDevice.set(2);
                Transfer t = direct.read(buf, v.extent(0, len));
                CompletionException ce =
                        assertThrows(CompletionException.class, () -> t.future().join());
                TransferException e = assertInstanceOf(TransferException.class, ce.getCause());
                assertTrue(
                        e.getMessage().contains("arrived in host memory, but copying them to the device failed")
                                && e.getMessage().contains("injected device copy failure"),
                        e.getMessage());
                assertOnlyWholeBytesLanded(gpu, stored, (byte) 0);

                device.failAfterCopiesToDevice.set(-1);
                gpu.fill((byte) 0);
                direct.read(buf, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                assertEquals(-1, MemorySegment.mismatch(stored, 0, len, gpu, 0, len), "the next read goes through");
            }
        }
    }

    @ParameterizedTest(name = "direct registration: {0}")
    @ValueSource(booleans = {false, true})
    void aCancelledReadKeepsItsHostCopyUntilItsPiecesFinishEvenWhenTheBufferIsClosed(boolean directly)
            throws Exception {
        TransferEngine engine = engine(directly);
        try (ScriptedTarget a = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a))) {
            long len = 256 << 10;
            MemorySegment stored = random(arena, len, 41);
            MemorySegment back = arena.allocate(len, 4096);
            try (LocalBuffer host = engine.register(stored);
                    LocalBuffer hostBack = engine.register(back)) {
                engine.write(host, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                CountDownLatch reached = new CountDownLatch(1);
                CountDownLatch go = new CountDownLatch(1);
                a.fault = (qid, pdu, bytes) -> {
                    if (qid >= 1 && pdu instanceof Pdu.C2HData) {
                        reached.countDown();
                        try {
                            go.await(); // the data goes out only after the transfer was cancelled and its buffer closed
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return bytes;
                };
                RecordingDeviceMemory device = new RecordingDeviceMemory(arena.allocate(len, 4096), PCI, SEQ);
                LocalBuffer buf = engine.register(device);
                Transfer t = engine.read(buf, v.extent(0, len));
                assertTrue(reached.await(30, TimeUnit.SECONDS), "the target got to answer the read");
                assertTrue(t.cancel());
                buf.close();
                go.countDown();
                a.fault = (qid, pdu, bytes) -> bytes;
                // the late data landed in host memory that was still there: the connection carries on
                engine.read(hostBack, v.extent(0, len)).future().get(60, TimeUnit.SECONDS);
                assertEquals(-1, MemorySegment.mismatch(stored, 0, len, back, 0, len));
                assertEquals(List.of(), device.named("copyFromHost"), device.events.toString());
            }
        }
    }
}
