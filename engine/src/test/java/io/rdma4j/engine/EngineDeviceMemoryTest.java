package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.ffi.Extended;
import io.rdma4j.topology.Fixtures;
import io.rdma4j.topology.Shapes;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Device memory in the engine, with real bytes between engines over libfabric tcp: the staging path (libfabric here has
 * no FI_HMEM, so the engine copies through registered host memory), the direct path (a backend wrapper registers the
 * host memory behind the {@link RecordingDeviceMemory} double, as a GPUDirect backend would register the GPU's), the
 * order of the device hooks against posting and completion, and NIC ranking by the GPU's PCI address on a p4d.24xlarge
 * topology (written here, and the captured one in the extended suite).
 */
class EngineDeviceMemoryTest {
    static final long MIB = 1 << 20;
    static final String GPU = "0000:10:1c.0";
    static final AtomicLong SEQ = new AtomicLong();
    static Arena arena;
    static TransferEngine host;
    static MemorySegment hostMem;
    static TransferEngine staged;
    static DeviceTestBackend stagedBackend;
    static TransferEngine direct;
    static DeviceTestBackend directBackend;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        host = TestEngines.tcp("dev-host", 2).build();
        hostMem = TestEngines.allocate(arena, 8 * MIB);
        host.publish("landing", host.register(hostMem), Access.anyPeer());
        DeviceTestBackend[] holder = new DeviceTestBackend[1];
        staged = TestEngines.tcp("dev-staged", 2)
                .backendWrapper(b -> holder[0] = new DeviceTestBackend(b, SEQ, null, false))
                .build();
        stagedBackend = holder[0];
        direct = TestEngines.tcp("dev-direct", 2)
                .backendWrapper(b -> holder[0] = new DeviceTestBackend(b, SEQ, null, true))
                .build();
        directBackend = holder[0];
    }

    @AfterAll
    static void stop() {
        for (TransferEngine e : new TransferEngine[] {host, staged, direct}) {
            if (e != null) {
                e.close();
            }
        }
        arena.close();
    }

    static RecordingDeviceMemory device(long bytes, long seed) {
        MemorySegment m = TestEngines.allocate(arena, bytes);
        TestEngines.fill(m, seed);
        return new RecordingDeviceMemory(m, GPU, SEQ);
    }

    @Test
    void deviceMemoryIsLocatedAtItsGpuAndSaysHowTheNicReachesIt() {
        RecordingDeviceMemory dev = device(MIB, 1);
        try (LocalBuffer s = staged.register(dev);
                LocalBuffer d = direct.register(dev)) {
            assertEquals(MemoryLocation.gpu(GPU), s.location());
            assertSame(dev, s.device());
            assertEquals(MIB, s.length());
            assertTrue(
                    s.toString().contains("staged through registered host memory")
                            && s.toString().contains("does not offer FI_HMEM"),
                    s.toString());
            assertTrue(d.toString().contains("registered directly with libfabric"), d.toString());
            var e = assertThrows(UnsupportedOperationException.class, s::segment);
            assertTrue(e.getMessage().contains("device memory"), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> staged.register((io.rdma4j.engine.spi.DeviceMemory) null));
    }

    @Test
    void stagedWriteWaitsForTheProducerThenCopiesThenPosts() {
        long len = 3 * MIB + 4321;
        RecordingDeviceMemory dev = device(4 * MIB, 2);
        try (LocalBuffer src = staged.register(dev)) {
            RemoteBuffer dst = staged.peer(host.name()).buffer("landing");
            stagedBackend.firstWritePost.set(-1);
            staged.write(src, 100, dst, 200, len, TransferOptions.tag(801)).join();
            assertNotNull(awaitTag(801), "the write's notification never came");
            assertEquals(-1, TestEngines.mismatch(dev.memory, 100, hostMem, 200, len));
            RecordingDeviceMemory.Event copy = dev.named("copyToHost").getFirst();
            assertEquals(100, copy.offset());
            assertEquals(len, copy.length());
            assertTrue(
                    dev.first("beforeNicRead") < copy.seq() && copy.seq() < stagedBackend.firstWritePost.get(),
                    dev.events + " post " + stagedBackend.firstWritePost);
        }
    }

    @Test
    void aBatchStagesEveryDeviceSourceBeforePostingAny() {
        RecordingDeviceMemory one = device(MIB, 21);
        RecordingDeviceMemory two = device(MIB, 22);
        try (LocalBuffer s1 = staged.register(one);
                LocalBuffer s2 = staged.register(two)) {
            RemoteBuffer dst = staged.peer(host.name()).buffer("landing");
            stagedBackend.firstWritePost.set(-1);
            List<Transfer> ts = staged.writeAll(List.of(
                    new TransferRequest(s1, 0, dst, 0, MIB, TransferOptions.tag(811)),
                    new TransferRequest(s2, 0, dst, MIB, MIB, TransferOptions.tag(812))));
            ts.forEach(Transfer::join);
            assertNotNull(awaitTag(811));
            assertNotNull(awaitTag(812));
            assertEquals(-1, TestEngines.mismatch(one.memory, 0, hostMem, 0, MIB));
            assertEquals(-1, TestEngines.mismatch(two.memory, 0, hostMem, MIB, MIB));
            assertTrue(
                    Math.max(one.first("copyToHost"), two.first("copyToHost")) < stagedBackend.firstWritePost.get(),
                    one.events + " " + two.events + " post " + stagedBackend.firstWritePost);
        }
    }

    @Test
    void aFailingStagingCopyPostsNothingAndTheBufferStaysUsable() {
        RecordingDeviceMemory dev = device(MIB, 23);
        try (LocalBuffer src = staged.register(dev)) {
            RemoteBuffer dst = staged.peer(host.name()).buffer("landing");
            stagedBackend.firstWritePost.set(-1);
            dev.failCopies = true;
            var e = assertThrows(TransferException.class, () -> staged.write(src, dst, TransferOptions.tag(821)));
            assertTrue(
                    e.getMessage().contains("injected") && e.getMessage().contains("nothing was posted"),
                    e.getMessage());
            assertEquals(-1, stagedBackend.firstWritePost.get(), "a write was posted although its staging copy failed");
            dev.failCopies = false;
            staged.write(src, dst, TransferOptions.tag(822)).join();
            assertNotNull(awaitTag(822));
            assertEquals(-1, TestEngines.mismatch(dev.memory, 0, hostMem, 0, MIB));
        }
    }

    @Test
    void stagedReadReachesTheDeviceBeforeTheFutureCompletes() {
        long len = 2 * MIB + 99;
        TestEngines.fill(hostMem.asSlice(5 * MIB, len), 3);
        RecordingDeviceMemory dev = device(4 * MIB, 4);
        try (LocalBuffer dst = staged.register(dev)) {
            RemoteBuffer src = staged.peer(host.name()).buffer("landing");
            stagedBackend.firstReadPost.set(-1);
            AtomicLong completedAt = new AtomicLong();
            AtomicBoolean bytesThere = new AtomicBoolean();
            Transfer t = staged.read(dst, 7, src, 5 * MIB, len, TransferOptions.DEFAULT);
            t.future().whenComplete((r, f) -> {
                bytesThere.set(TestEngines.mismatch(dev.memory, 7, hostMem, 5 * MIB, len) == -1);
                completedAt.set(SEQ.incrementAndGet());
            });
            assertEquals(len, t.join().bytes());
            waitFor(() -> completedAt.get() != 0);
            assertTrue(bytesThere.get(), "the device memory lacked the bytes when the future completed");
            RecordingDeviceMemory.Event copy = dev.named("copyFromHost").getFirst();
            assertEquals(7, copy.offset());
            assertEquals(len, copy.length());
            assertTrue(
                    stagedBackend.firstReadPost.get() < copy.seq() && copy.seq() < completedAt.get(),
                    dev.events + " completed " + completedAt);
            assertTrue(
                    dev.named("afterNicWrite").isEmpty(), "the NIC wrote host memory, not the device: " + dev.events);
        }
    }

    @Test
    void directWriteWaitsForTheProducerBeforeTheFirstPostAndNeverCopies() {
        long len = 3 * MIB;
        RecordingDeviceMemory dev = device(4 * MIB, 5);
        try (LocalBuffer src = direct.register(dev)) {
            RemoteBuffer dst = direct.peer(host.name()).buffer("landing");
            directBackend.firstWritePost.set(-1);
            direct.write(src, MIB, dst, 0, len, TransferOptions.tag(802)).join();
            assertNotNull(awaitTag(802), "the write's notification never came");
            assertEquals(-1, TestEngines.mismatch(dev.memory, MIB, hostMem, 0, len));
            assertTrue(dev.first("beforeNicRead") < directBackend.firstWritePost.get(), dev.events.toString());
            assertTrue(dev.named("copyToHost").isEmpty(), dev.events.toString());
        }
    }

    @Test
    void directReadFlushesBeforeTheFutureCompletes() {
        long len = MIB + 5;
        TestEngines.fill(hostMem.asSlice(0, len), 6);
        RecordingDeviceMemory dev = device(2 * MIB, 7);
        try (LocalBuffer dst = direct.register(dev)) {
            RemoteBuffer src = direct.peer(host.name()).buffer("landing");
            directBackend.firstReadPost.set(-1);
            AtomicLong completedAt = new AtomicLong();
            Transfer t = direct.read(dst, 0, src, 0, len, TransferOptions.DEFAULT);
            t.future().whenComplete((r, f) -> completedAt.set(SEQ.incrementAndGet()));
            t.join();
            waitFor(() -> completedAt.get() != 0);
            assertEquals(-1, TestEngines.mismatch(dev.memory, 0, hostMem, 0, len));
            long flush = dev.first("afterNicWrite");
            assertTrue(
                    directBackend.firstReadPost.get() < flush && flush < completedAt.get(),
                    dev.events + " completed " + completedAt);
            assertTrue(dev.named("copyFromHost").isEmpty(), dev.events.toString());
        }
    }

    @Test
    void checksumsOfDirectDeviceMemoryAreRefusedBeforePosting() {
        RecordingDeviceMemory dev = device(MIB, 8);
        try (LocalBuffer src = direct.register(dev)) {
            RemoteBuffer dst = direct.peer(host.name()).buffer("landing");
            directBackend.firstWritePost.set(-1);
            var e = assertThrows(
                    io.rdma4j.InvalidArgumentException.class,
                    () -> direct.write(src, dst, TransferOptions.tag(803).withCrc32c()));
            assertTrue(e.getMessage().contains("CRC32C") && e.getMessage().contains("device memory"), e.getMessage());
            assertEquals(-1, directBackend.firstWritePost.get(), "something was posted");
            assertTrue(dev.events.isEmpty(), "hooks ran for a refused write: " + dev.events);
            // the buffer is still usable afterwards: the refused write released what it held
            direct.write(src, dst, TransferOptions.tag(804)).join();
            assertNotNull(awaitTag(804), "the write's notification never came");
        }
    }

    @Test
    void publishedStagedDeviceMemoryIsCopiedForPeersAndBackBeforeTheNotification() throws Exception {
        RecordingDeviceMemory dev = device(2 * MIB, 9);
        try (LocalBuffer buf = staged.register(dev)) {
            staged.publish("gpu-staged", buf, Access.anyPeer());
            assertTrue(dev.first("beforeNicRead") < dev.first("copyToHost"), dev.events.toString());
            RemoteBuffer remote = host.peer(staged.name()).buffer("gpu-staged");
            MemorySegment readBack = TestEngines.allocate(arena, 2 * MIB);
            try (LocalBuffer rb = host.register(readBack)) {
                host.read(rb, remote).join();
            }
            assertEquals(
                    -1,
                    TestEngines.mismatch(readBack, 0, dev.memory, 0, 2 * MIB),
                    "a peer's read saw what the device held at publish");

            MemorySegment src = TestEngines.allocate(arena, MIB);
            TestEngines.fill(src, 10);
            try (LocalBuffer s = host.register(src)) {
                host.write(s, 0, remote, 4096, MIB, TransferOptions.tag(901).withCrc32c())
                        .join();
            }
            Notification n = staged.awaitTag(901, Duration.ofSeconds(20));
            assertNotNull(n, "notification 901 never arrived");
            assertEquals(Notification.Checksum.VERIFIED, n.checksum());
            assertEquals(
                    -1,
                    TestEngines.mismatch(src, 0, dev.memory, 4096, MIB),
                    "the device lacked the bytes when the notification came");
            RecordingDeviceMemory.Event copy = dev.named("copyFromHost").getFirst();
            assertEquals(4096, copy.offset());
            assertEquals(MIB, copy.length());
            staged.unpublish("gpu-staged");
        }
    }

    @Test
    void publishedDirectDeviceMemoryIsFlushedBeforeTheNotification() throws Exception {
        RecordingDeviceMemory dev = device(MIB, 11);
        try (LocalBuffer buf = direct.register(dev)) {
            direct.publish("gpu-direct", buf, Access.anyPeer());
            assertEquals(1, dev.named("beforeNicRead").size());
            RemoteBuffer remote = host.peer(direct.name()).buffer("gpu-direct");
            MemorySegment src = TestEngines.allocate(arena, 64 << 10);
            TestEngines.fill(src, 12);
            try (LocalBuffer s = host.register(src)) {
                host.write(s, 0, remote, 0, 64 << 10, TransferOptions.tag(902)).join();
            }
            assertNotNull(direct.awaitTag(902, Duration.ofSeconds(20)), "notification 902 never arrived");
            assertEquals(1, dev.named("afterNicWrite").size(), "no flush before the notification: " + dev.events);
            assertEquals(-1, TestEngines.mismatch(src, 0, dev.memory, 0, 64 << 10));
            direct.unpublish("gpu-direct");
        }
    }

    @Test
    void aGpuLocationPicksThatGpusNicOnAP4d(@TempDir Path tmp) {
        picksEachGpusOwnNic("dev-p4d", Shapes.copy(Shapes.P4D, tmp));
    }

    @Test
    @Extended
    void aGpuLocationPicksThatGpusNicOnACapturedP4d() {
        picksEachGpusOwnNic("dev-p4d-capture", Fixtures.file(Fixtures.P4D_CAPTURE));
    }

    /**
     * p4d.24xlarge: four EFA NICs, each on the PCIe switch of two GPUs (ground truth in ../shared/topology/README.md).
     */
    private static void picksEachGpusOwnNic(String name, Path topology) {
        List<String> nics = List.of("0000:10:1b.0", "0000:20:1b.0", "0000:90:1b.0", "0000:a0:1b.0");
        try (TransferEngine p4d = TestEngines.tcp(name, 4)
                .topology(topology)
                .backendWrapper((EngineBackend b) -> new DeviceTestBackend(b, SEQ, nics, false))
                .build()) {
            RemoteBuffer dst = p4d.peer(host.name()).buffer("landing");
            // the GPU's own NIC ranks PIX, the other NIC on its socket NODE, the far socket's SYS; the peer here has
            // no PCI NIC (its side ranks NODE), so every pair's worse level is at best NODE, and among those the
            // planner keeps only the GPU's own PIX NIC: its socket neighbour would carry GPU memory across the root
            // complex
            String[][] cases = {
                {"0000:10:1c.0", "0000:10:1b.0"},
                {"0000:20:1d.0", "0000:20:1b.0"},
                {"0000:90:1d.0", "0000:90:1b.0"},
                {"0000:a0:1c.0", "0000:a0:1b.0"}
            };
            for (String[] c : cases) {
                RecordingDeviceMemory dev = new RecordingDeviceMemory(TestEngines.allocate(arena, 4 * MIB), c[0], SEQ);
                try (LocalBuffer src = p4d.register(dev)) {
                    Plan plan = p4d.explain(src, dst);
                    Map<String, String> levels = new TreeMap<>();
                    plan.lanes().forEach(l -> levels.put(l.localNic(), l.localLevel()));
                    assertEquals(new TreeMap<>(Map.of(c[1], "PIX")), levels, plan.toText());
                }
            }
            // host memory ranks no NIC at PIX: the PIX above came from the GPU's PCI address
            try (LocalBuffer h = p4d.register(TestEngines.allocate(arena, 4 * MIB))) {
                Plan plan = p4d.explain(h, dst);
                assertTrue(
                        !plan.lanes().isEmpty()
                                && plan.lanes().stream()
                                        .noneMatch(l -> l.localLevel().equals("PIX")),
                        plan.toText());
            }
        }
    }

    private static Notification awaitTag(long tag) {
        try {
            return host.awaitTag(tag, Duration.ofSeconds(20));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void waitFor(BooleanSupplier done) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out");
            }
            Thread.onSpinWait();
        }
    }
}
