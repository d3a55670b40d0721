package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The polled queue against the Linux kernel target (nvmet-tcp) in the test VM ({@code scripts/testvm test nvmeof}):
 * every shape of command byte for byte, with digests off and on, checked both through the polled queue and through the
 * controller's own queues; and a queue kept full from its completion handler.
 */
@Tag("testvm")
class PolledQueueGuestTest {
    private static Target target;
    private static String nqn;

    @TempDir
    static Path home;

    @BeforeAll
    static void findTarget() {
        String tcp = System.getenv("RDMA4J_NVMET_TCP");
        nqn = System.getenv("RDMA4J_NVMET_NQN");
        if (tcp == null || nqn == null) {
            throw new IllegalStateException(
                    "RDMA4J_NVMET_TCP / RDMA4J_NVMET_NQN are not set: these tests run in the test VM"
                            + " (scripts/testvm test nvmeof), which starts the kernel target and sets them");
        }
        target = Target.parseTcp(tcp);
    }

    private static ConnectOptions options(boolean digests) {
        return ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(1)
                .withQueueDepth(32)
                .withDigests(digests, digests)
                .withIoTimeout(Duration.ofSeconds(60));
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

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void everyShapeOfCommandLandsByteForByte(boolean digests) throws Exception {
        try (Arena shared = Arena.ofShared();
                Arena confined = Arena.ofConfined();
                Controller c = Controller.connect(target, nqn, options(digests));
                PolledQueue q = c.openPolledQueue(1, 32)) {
            int max = q.maxBytes();
            int[] sizes = {512, 4096, 8192, 65536, 131072, max};
            long stride = Math.max(max, 131072);
            MemorySegment src = random(shared, stride * sizes.length, digests ? 21 : 22);
            List<Integer> statuses = new ArrayList<>();
            IoCompletion done = (tag, status) -> statuses.add(status);
            long base = (digests ? 640L << 20 : 512L << 20) / 512;
            for (int i = 0; i < sizes.length; i++) {
                assertTrue(q.write(base + i * stride / 512, src, i * stride, sizes[i], i));
            }
            drain(q, done);
            assertEquals(sizes.length, statuses.size());
            assertTrue(statuses.stream().allMatch(s -> s == PolledQueue.OK), statuses.toString());
            for (Arena a : List.of(shared, confined)) {
                MemorySegment dst = a.allocate(stride * sizes.length, 4096);
                statuses.clear();
                for (int i = 0; i < sizes.length; i++) {
                    assertTrue(q.read(base + i * stride / 512, dst, i * stride, sizes[i], i));
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
            }
            // the controller's own queues read what the polled queue wrote
            MemorySegment check = shared.allocate(max, 4096);
            c.read(1, base + 5 * stride / 512, check).get(60, TimeUnit.SECONDS);
            assertEquals(-1L, MemorySegment.mismatch(src, 5 * stride, 5 * stride + max, check, 0, max));
            assertTrue(q.flush(99));
            statuses.clear();
            drain(q, done);
            assertEquals(List.of(PolledQueue.OK), statuses);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 32})
    void aHandlerKeepsTheQueueFullFromOneThread(int depth) throws Exception {
        int n = 2000;
        try (Arena arena = Arena.ofConfined();
                Controller c = Controller.connect(target, nqn, options(false));
                PolledQueue q = c.openPolledQueue(1, depth)) {
            MemorySegment out = random(arena, 4096L * n, depth);
            MemorySegment in = arena.allocate(4096L * n, 4096);
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
                        boolean ok = write
                                ? q.write(300_000 + i * 8, mem, i * 4096, 4096, i)
                                : q.read(300_000 + i * 8, mem, i * 4096, 4096, i);
                        assertTrue(ok);
                    }
                };
                for (int s = 0; s < depth; s++) {
                    long i = next[0]++;
                    assertTrue(
                            write
                                    ? q.write(300_000 + i * 8, mem, i * 4096, 4096, i)
                                    : q.read(300_000 + i * 8, mem, i * 4096, 4096, i));
                }
                drain(q, refill);
                assertEquals(0, bad[0]);
            }
            assertEquals(-1L, in.mismatch(out));
        }
    }
}
