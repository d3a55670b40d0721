package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.RecordingDeviceMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The polled queue over NVMe/RDMA against the Linux kernel target (nvmet-rdma over Soft-RoCE rxe0) in the test VM:
 * {@code scripts/testvm test --nvmet PolledRdmaQueueGuestTest}. Every shape of command byte for byte (in-capsule
 * writes, keyed SGLs up to the largest transfer, Flush), read back through the polled queue and the controller's own
 * queues; a queue kept full from its completion handler with the caller's memory registered once; and the polling
 * thread allocating nothing per I/O once compiled.
 */
@Tag("testvm")
class PolledRdmaQueueGuestTest {
    /** Namespace 1 from 800 MiB on: clear of what the other guest tests write. */
    private static final long BASE_LBA = (800L << 20) / 512;

    private static Target target;
    private static String nqn;

    @TempDir
    static Path home;

    @BeforeAll
    static void findTarget() {
        String rdma = System.getenv("RDMA4J_NVMET_RDMA");
        nqn = System.getenv("RDMA4J_NVMET_NQN");
        if (rdma == null || nqn == null) {
            throw new IllegalStateException(
                    "RDMA4J_NVMET_RDMA / RDMA4J_NVMET_NQN are not set: these tests run in the test VM"
                            + " (scripts/testvm test --nvmet PolledRdmaQueueGuestTest), which starts the kernel target"
                            + " and sets them");
        }
        target = Target.parseRdma(rdma);
    }

    private static ConnectOptions options() {
        return ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(1)
                .withQueueDepth(32)
                .withConnectTimeout(Duration.ofSeconds(30))
                .withIoTimeout(Duration.ofSeconds(120));
    }

    private static MemorySegment random(Arena arena, long n, long seed) {
        MemorySegment s = arena.allocate(n, 4096);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        return s;
    }

    private static void drain(PolledQueue q, IoCompletion done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (q.inFlight() > 0) {
            assertTrue(System.nanoTime() < deadline, "commands still in flight after 120 s");
            q.poll(done, Duration.ofMillis(500));
        }
    }

    @Test
    void everyShapeOfCommandLandsByteForByte() throws Exception {
        try (Arena arena = Arena.ofShared();
                Controller c = Controller.connect(target, nqn, options());
                PolledQueue q = c.openPolledQueue(1, 32)) {
            int max = q.maxBytes();
            // 512 B and 4 KiB writes fit nvmet-rdma's in-capsule data (4 KiB by default); the rest go by keyed SGL
            int[] sizes = {512, 4096, 8192, 65536, 131072, max};
            long stride = Math.max(max, 131072);
            MemorySegment src = random(arena, stride * sizes.length, 31);
            List<Integer> statuses = new ArrayList<>();
            IoCompletion done = (tag, status) -> statuses.add(status);
            for (int i = 0; i < sizes.length; i++) {
                assertTrue(q.write(BASE_LBA + i * stride / 512, src, i * stride, sizes[i], i));
            }
            drain(q, done);
            assertEquals(sizes.length, statuses.size());
            assertTrue(statuses.stream().allMatch(s -> s == PolledQueue.OK), statuses.toString());
            MemorySegment dst = arena.allocate(stride * sizes.length, 4096);
            statuses.clear();
            for (int i = 0; i < sizes.length; i++) {
                assertTrue(q.read(BASE_LBA + i * stride / 512, dst, i * stride, sizes[i], i));
            }
            drain(q, done);
            assertTrue(statuses.stream().allMatch(s -> s == PolledQueue.OK), statuses.toString());
            for (int i = 0; i < sizes.length; i++) {
                assertEquals(
                        -1L,
                        MemorySegment.mismatch(
                                src, i * stride, i * stride + sizes[i], dst, i * stride, i * stride + sizes[i]),
                        "read " + i + " of " + sizes[i] + " bytes");
            }
            // the controller's own queues read what the polled queue wrote, and the other way round
            MemorySegment check = arena.allocate(max, 4096);
            c.read(1, BASE_LBA + 5 * stride / 512, check).get(60, TimeUnit.SECONDS);
            assertEquals(-1L, MemorySegment.mismatch(src, 5 * stride, 5 * stride + max, check, 0, max));
            MemorySegment other = random(arena, 65536, 32);
            c.write(1, BASE_LBA + 6 * stride / 512, other).get(60, TimeUnit.SECONDS);
            statuses.clear();
            assertTrue(q.read(BASE_LBA + 6 * stride / 512, check, 0, 65536, 7));
            drain(q, done);
            assertEquals(List.of(PolledQueue.OK), statuses);
            assertEquals(-1L, MemorySegment.mismatch(other, 0, 65536, check, 0, 65536));
            assertTrue(q.flush(99));
            statuses.clear();
            drain(q, done);
            assertEquals(List.of(PolledQueue.OK), statuses);
            // a read past the end of the namespace is refused before it is sent; heap memory is refused by name
            long blocks = c.namespace(1).blocks();
            assertThrows(IllegalArgumentException.class, () -> q.read(blocks, check, 0, 512, 0));
            String heap = assertThrows(
                            IllegalArgumentException.class,
                            () -> q.write(BASE_LBA, MemorySegment.ofArray(new byte[4096]), 0))
                    .getMessage();
            assertTrue(heap.contains("heap segment"), heap);
        }
    }

    /**
     * GPU memory (the recording double, whose pages rxe registers by address as a peer-memory client lets a NIC
     * register a GPU's) registered with {@link Controller#registerDevice}: commands over its device addresses name that
     * registration in keyed SGLs (no registration of the caller's buffers is made for them), small writes included,
     * which from host memory would travel in the capsule.
     */
    @Test
    void registeredDeviceMemoryIsNamedStraightByKeyedSgls() throws Exception {
        try (Arena arena = Arena.ofShared();
                Controller c = Controller.connect(target, nqn, options());
                PolledQueue q = c.openPolledQueue(1, 8)) {
            MemorySegment gpu = random(arena, 1 << 20, 41);
            MemorySegment original = arena.allocate(1 << 20, 4096);
            MemorySegment.copy(gpu, 0, original, 0, 1 << 20);
            RecordingDeviceMemory device =
                    new RecordingDeviceMemory(gpu, "0000:3b:00.0", new java.util.concurrent.atomic.AtomicLong());
            c.registerDevice(device);
            c.registerDevice(device); // once is enough; again is a no-op
            int registrations = c.rdmaRegistrations();
            MemorySegment dev = MemorySegment.ofAddress(device.address()).reinterpret(device.length());
            long lba = (960L << 20) / 512;
            int[] sizes = {512, 4096, 65536};
            List<Integer> statuses = new ArrayList<>();
            IoCompletion done = (tag, status) -> statuses.add(status);
            long at = 0;
            for (int size : sizes) {
                assertTrue(q.write(lba + at / 512, dev, at, size, size));
                at += size;
            }
            drain(q, done);
            assertEquals(List.of(PolledQueue.OK, PolledQueue.OK, PolledQueue.OK), statuses);
            gpu.asSlice(0, at).fill((byte) 0);
            statuses.clear();
            at = 0;
            for (int size : sizes) {
                assertTrue(q.read(lba + at / 512, dev, at, size, size));
                at += size;
            }
            drain(q, done);
            assertTrue(statuses.stream().allMatch(st -> st == PolledQueue.OK), statuses.toString());
            assertEquals(-1L, MemorySegment.mismatch(original, 0, at, gpu, 0, at), "read back into device memory");
            assertEquals(registrations, c.rdmaRegistrations(), "no caller-buffer registration for device memory");
            // released: the NIC unpins it, and its addresses are plain memory to the controller again (a command over
            // them registers them as a caller buffer, as for any host memory)
            assertEquals(1, c.deviceRegistrations());
            assertTrue(c.deregisterDevice(device));
            assertFalse(c.deregisterDevice(device), "released once");
            assertEquals(0, c.deviceRegistrations());
            statuses.clear();
            assertTrue(q.read(lba, dev, 0, 4096, 9));
            drain(q, done);
            assertEquals(List.of(PolledQueue.OK), statuses);
            assertEquals(registrations + 1, c.rdmaRegistrations(), "the released memory is registered as a buffer");
            assertEquals(-1L, MemorySegment.mismatch(original, 0, 4096, gpu, 0, 4096));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 32})
    void aHandlerKeepsTheQueueFullAndTheMemoryIsRegisteredOnce(int depth) throws Exception {
        int n = 2000;
        long lba = (700L << 20) / 512;
        try (Arena arena = Arena.ofShared();
                Controller c = Controller.connect(target, nqn, options());
                PolledQueue q = c.openPolledQueue(1, depth)) {
            MemorySegment out = random(arena, 8192L * n, depth);
            MemorySegment in = arena.allocate(8192L * n, 4096);
            int registrations = c.rdmaRegistrations();
            for (boolean write : List.of(true, false)) {
                MemorySegment mem = write ? out : in;
                long[] next = {0};
                int[] bad = {0};
                IoCompletion refill = (tag, status) -> {
                    if (status != PolledQueue.OK) {
                        bad[0]++;
                    }
                    if (next[0] < n) {
                        long i = next[0]++;
                        assertTrue(
                                write
                                        ? q.write(lba + i * 16, mem, i * 8192, 8192, i)
                                        : q.read(lba + i * 16, mem, i * 8192, 8192, i));
                    }
                };
                for (int s = 0; s < q.depth(); s++) {
                    long i = next[0]++;
                    assertTrue(
                            write
                                    ? q.write(lba + i * 16, mem, i * 8192, 8192, i)
                                    : q.read(lba + i * 16, mem, i * 8192, 8192, i));
                }
                drain(q, refill);
                assertEquals(0, bad[0]);
            }
            assertEquals(-1L, in.mismatch(out), "what was read differs from what was written");
            // 4,000 commands of 8 KiB (keyed SGLs) on two buffers: two registrations, each made once
            assertEquals(registrations + 2, c.rdmaRegistrations());
        }
    }

    /**
     * What the polling thread allocates for 4 KiB reads and 8 KiB writes once warm, by the JVM's per-thread allocation
     * counter over {@value #MEASURED} I/Os: an object per I/O would be 16 bytes or more each, and none is made. Rounds
     * alternate between polling without waiting (measured) and polling that waits in {@code poll(2)} when nothing is
     * ready (printed: its calls are fewer, so under emulation the JIT compiles them late, and until then each native
     * call through FFM allocates its frame; compiled, they allocate nothing).
     */
    @Test
    void thePollingThreadAllocatesNothingPerIo() throws Exception {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined();
                Controller c = Controller.connect(target, nqn, options());
                PolledQueue q = c.openPolledQueue(1, 8)) {
            MemorySegment buf = random(arena, 8192 * 8, 5);
            long[] done = {0};
            int[] bad = {0};
            IoCompletion count = (tag, status) -> {
                if (status != PolledQueue.OK) {
                    bad[0]++;
                }
                done[0]++;
            };
            long lba = (900L << 20) / 512;
            for (int size : new int[] {4096, 8192}) {
                boolean write = size == 8192;
                long best = Long.MAX_VALUE;
                long bestWaiting = Long.MAX_VALUE;
                // the claim is about the compiled path, so the best of up to 12 measured rounds counts
                for (int round = 0; round < 24 && best >= MEASURED; round++) {
                    boolean waiting = round % 2 == 0;
                    long before = threads.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < MEASURED; i += 8) {
                        for (int k = 0; k < 8; k++) {
                            long off = (long) k * size;
                            assertTrue(
                                    write
                                            ? q.write(lba + k * 16L, buf, off, size, k)
                                            : q.read(lba + k * 16L, buf, off, size, k));
                        }
                        long target = done[0] + 8;
                        while (done[0] < target) {
                            if (waiting) {
                                q.poll(count, WAIT);
                            } else {
                                q.poll(count);
                            }
                        }
                    }
                    long used = threads.getCurrentThreadAllocatedBytes() - before;
                    if (waiting) {
                        bestWaiting = Math.min(bestWaiting, used);
                    } else {
                        best = Math.min(best, used);
                    }
                }
                assertEquals(0, bad[0]);
                System.out.printf(
                        "polled RDMA %s of %d bytes: the polling thread allocated %d bytes over %d I/Os"
                                + " (%d when waiting in poll(2))%n",
                        write ? "write" : "read", size, best, MEASURED, bestWaiting);
                assertTrue(
                        best < MEASURED,
                        (write ? "write" : "read") + " of " + size + " bytes: the polling thread allocated " + best
                                + " bytes over " + MEASURED + " I/Os in the best of 12 rounds");
            }
        }
    }

    private static final int MEASURED = 4000;
    private static final Duration WAIT = Duration.ofMillis(100);
}
