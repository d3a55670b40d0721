package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.PlanLane;
import io.rdma4j.engine.RecordingDeviceMemory;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferResult;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine writing to and reading from the Linux kernel target in the test VM ({@code scripts/testvm test --nvmet
 * EngineVolumeGuestTest}): a volume striped over namespaces 1 (1 GiB null_blk) and 2 (256 MiB file) of
 * RDMA4J_NVMET_NQN, over NVMe/TCP and over NVMe/RDMA through rxe0, leaving from rxe0's network interface address, which
 * the plan names; and GPU memory (the engine's recording double) moved straight to and from the device over NVMe/RDMA.
 * The extents sit in the first zone (both namespaces), clear of what the other guest tests write.
 */
@Tag("testvm")
class EngineVolumeGuestTest {
    @TempDir
    static Path home;

    private static TransferEngine engine;
    private static String nqn;
    private static String address;

    @BeforeAll
    static void start() {
        nqn = System.getenv("RDMA4J_NVMET_NQN");
        String tcp = System.getenv("RDMA4J_NVMET_TCP");
        String addr = System.getenv("RDMA4J_TESTVM_ADDR");
        if (nqn == null || tcp == null || addr == null) {
            throw new IllegalStateException(
                    "RDMA4J_NVMET_NQN / RDMA4J_NVMET_TCP / RDMA4J_TESTVM_ADDR are not set: these tests run in the test VM"
                            + " (scripts/testvm test --nvmet EngineVolumeGuestTest), which starts the kernel target and sets them");
        }
        address = addr.split("/")[0];
        engine = TransferEngine.builder()
                .name("guest-volumes")
                .backend("libfabric")
                .provider("tcp")
                .nicFilter("lo")
                .build();
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    private static VolumeSpec spec(String transport) {
        String target = System.getenv(transport.equals("tcp") ? "RDMA4J_NVMET_TCP" : "RDMA4J_NVMET_RDMA");
        return VolumeSpec.of(
                        transport + "://" + target + "/" + nqn + "/1", transport + "://" + target + "/" + nqn + "/2")
                .near(MemoryLocation.numa(0))
                .withOption("identityDir", home.toString())
                .withOption("ioQueues", "2")
                .withOption("queueDepth", "32")
                .withOption("connectTimeoutMs", "30000")
                .withOption("ioTimeoutMs", "120000");
    }

    private static MemorySegment random(Arena arena, long n, long seed) {
        MemorySegment s = arena.allocate(n, 4096);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        return s;
    }

    private static int crc(MemorySegment s) {
        CRC32C c = new CRC32C();
        c.update(s.asByteBuffer());
        return (int) c.getValue();
    }

    /** Writes, reads back and compares CRC32C and bytes; returns the plan of the write. */
    private static Plan roundTrip(StorageVolume v, long volumeByte, long length, long seed) throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment out = random(arena, length, seed);
            MemorySegment in = arena.allocate(length, 4096);
            VolumeExtent e = v.extent(volumeByte / v.blockSize(), length);
            try (LocalBuffer src = engine.register(out, MemoryLocation.numa(0));
                    LocalBuffer dst = engine.register(in, MemoryLocation.numa(0))) {
                long t0 = System.nanoTime();
                TransferResult w = engine.write(src, e).future().get(300, TimeUnit.SECONDS);
                long t1 = System.nanoTime();
                v.flush().get(60, TimeUnit.SECONDS);
                engine.read(dst, 0, e, 0, length, TransferOptions.DEFAULT.withDeadline(Duration.ofSeconds(300)))
                        .join();
                long t2 = System.nanoTime();
                assertEquals(List.of(0, 1), w.lanesUsed(), "both namespaces carried stripes");
                assertEquals(crc(out), crc(in), "CRC32C of what was read back");
                assertEquals(-1, in.mismatch(out));
                System.out.printf(
                        "%s: %d MiB written in %d ms, read in %d ms%n",
                        v.name(), length >> 20, (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000);
                return engine.explain(src, e);
            }
        }
    }

    private static void assertLeavesFromRxe(Plan plan) {
        System.out.print(plan.toText());
        for (PlanLane l : plan.lanes()) {
            assertTrue(
                    l.localNic().startsWith(System.getenv().getOrDefault("RDMA4J_RXE_DEVICE", "rxe0") + " (")
                            && l.localNic().endsWith(" " + address + ")"),
                    "NIC of " + l.remoteNic() + ": " + l.localNic() + "; " + plan.reason());
        }
        assertTrue(plan.reason().contains("with IPv4 address " + address), plan.reason());
    }

    @Test
    void writesAndReadsSixtyFourMiBStripedOverTwoNamespacesOverTcp() throws Exception {
        try (StorageVolume v = engine.openVolume(spec("tcp"))) {
            assertEquals(
                    (1L << 30) + (256L << 20),
                    v.capacityBytes(),
                    "zone 0 stripes both up to 256 MiB each, zone 1 is the rest of namespace 1");
            Plan plan = roundTrip(v, 384L << 20, 64L << 20, 64);
            assertEquals(2, plan.lanes().size());
            assertEquals(32L << 20, plan.lanes().get(0).bytes(), "1 MiB units alternate");
            assertLeavesFromRxe(plan);
            v.describe().forEach(System.out::println);
        }
    }

    @Test
    void writesAndReadsOverRdmaThroughRxe() throws Exception {
        try (StorageVolume v = engine.openVolume(spec("rdma").withStripeUnit(256 << 10))) {
            Plan plan = roundTrip(v, 448L << 20, 8L << 20, 8);
            assertLeavesFromRxe(plan);
        }
    }

    /**
     * GPU memory (the recording double, whose pages rxe can register by address as nvidia_peermem lets a NIC register a
     * GPU's) moves straight between the NVMe/RDMA namespaces and the device: keyed SGLs point at the controllers'
     * registrations of it, and no byte is copied through host memory. Closing the buffer releases those registrations:
     * the kernel lists no memory region of this process over the device memory any more.
     */
    @Test
    void gpuMemoryDoubleMovesStraightBetweenRdmaNamespacesAndTheDevice() throws Exception {
        long length = (4L << 20) + (256 << 10); // a length no other region of this process has
        try (StorageVolume v = engine.openVolume(spec("rdma").withStripeUnit(256 << 10));
                Arena arena = Arena.ofShared()) {
            MemorySegment original = random(arena, length, 17);
            MemorySegment gpu = arena.allocate(length, 4096);
            MemorySegment.copy(original, 0, gpu, 0, length);
            RecordingDeviceMemory device = new RecordingDeviceMemory(gpu, "0000:3b:00.0", new AtomicLong());
            VolumeExtent e = v.extent((464L << 20) / v.blockSize(), length);
            long before = regionsOf(length);
            try (LocalBuffer buf = engine.register(device)) {
                String reason = engine.explain(buf, e).reason();
                assertTrue(reason.contains("moved straight between the targets and the device"), reason);
                engine.write(buf, e).future().get(300, TimeUnit.SECONDS);
                v.flush().get(60, TimeUnit.SECONDS);
                gpu.fill((byte) 0);
                engine.read(buf, e).future().get(300, TimeUnit.SECONDS);
                assertEquals(crc(original), crc(gpu), "CRC32C of what came back to the device");
                // the producer synced before the write, the NICs' writes made visible after the read; nothing staged
                List<String> what = device.events.stream()
                        .map(RecordingDeviceMemory.Event::what)
                        .toList();
                assertEquals(List.of("beforeNicRead", "afterNicWrite"), what, device.events.toString());
                assertTrue(
                        regionsOf(length) > before,
                        "the controllers registered the device memory; the kernel lists: " + memoryRegions());
            }
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (regionsOf(length) != before && System.nanoTime() < end) {
                Thread.sleep(100);
            }
            assertEquals(
                    before, regionsOf(length), "memory regions over the device memory left after its buffer closed");
        }
    }

    /**
     * {@return the RDMA memory regions of {@code length} bytes, as the kernel lists them} (its {@code pid} is the
     * registering thread's, not this process's: the length alone, which nothing else registers, picks them out)
     */
    private static long regionsOf(long length) throws Exception {
        return memoryRegions()
                .lines()
                .filter(l -> (l + " ").contains(" mrlen " + length + " "))
                .count();
    }

    /** {@return what {@code rdma resource show mr} lists} */
    private static String memoryRegions() throws Exception {
        String tool = java.util.stream.Stream.of("/usr/sbin/rdma", "/sbin/rdma", "/usr/bin/rdma", "/bin/rdma")
                .filter(p -> java.nio.file.Files.isExecutable(Path.of(p)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no rdma tool (iproute2) in the guest"));
        Process p = new ProcessBuilder(tool, "resource", "show", "mr")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        return out;
    }
}
