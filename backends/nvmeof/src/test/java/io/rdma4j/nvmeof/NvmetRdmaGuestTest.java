package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVMe/RDMA against the Linux kernel target (nvmet-rdma over Soft-RoCE rxe0) in the test VM: {@code scripts/testvm test
 * --nvmet NvmetRdmaGuestTest}. The VM exports RDMA4J_NVMET_RDMA (address:port) and RDMA4J_NVMET_NQN; namespace 1 is a 1
 * GiB memory-backed null_blk with 512-byte blocks. Data moves by the target's RDMA READ / WRITE on registered buffers
 * named by keyed SGLs (and in-capsule for small writes where IOCCSZ allows).
 */
@Tag("testvm")
class NvmetRdmaGuestTest {
    /** Namespace 1 from 512 MiB on: clear of what the NVMe/TCP guest tests write. */
    private static final long BASE_LBA = (512L << 20) / 512;

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
                            + " (scripts/testvm test --nvmet NvmetRdmaGuestTest), which starts the kernel target and sets them");
        }
        target = Target.parseRdma(rdma);
    }

    private static ConnectOptions options() {
        return ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(2)
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

    @Test
    void connectsIdentifiesAndDiscoversOverRdma() {
        try (Controller c = Controller.connect(target, nqn, options())) {
            assertEquals(nqn, c.info().subsystemNqn());
            assertTrue(c.info().model().startsWith("Linux"), c.info().model());
            assertTrue(c.ioQueueCount() >= 1 && c.ioQueueCount() <= 2);
            assertEquals(List.of(1L, 2L), c.activeNamespaces());
            assertEquals(512, c.namespace(1).blockSize());
            assertEquals(1L << 30, c.namespace(1).bytes());
            assertEquals(0, c.maxH2CData(), "no ICResp on NVMe/RDMA");
            // nvmet-rdma's default inline_data_size is a page: the 512- and 4096-byte writes below travel in the
            // capsule
            assertTrue(
                    c.info().inCapsuleDataBytes() >= 4096,
                    "in-capsule data bytes: " + c.info().inCapsuleDataBytes());
        }
        DiscoveryLog log = Controller.discover(target, options());
        assertTrue(
                log.entries().stream()
                        .anyMatch(e -> e.subsystemNqn().equals(nqn)
                                && e.transportName().equals("rdma")
                                && e.address().equals(target.host())),
                log.toString());
    }

    @Test
    void writesReadsAndVerifiesUpToFourMiBThroughRegisteredAndHeapBuffers() throws Exception {
        try (Controller c = Controller.connect(target, nqn, options());
                Arena arena = Arena.ofShared()) {
            long lba = BASE_LBA;
            for (long size : List.of(512L, 4096L, 20480L, 131072L, 1L << 20, 4L << 20)) {
                MemorySegment out = random(arena, size, size);
                MemorySegment in = arena.allocate(size, 4096);
                c.write(1, lba, out).get(120, TimeUnit.SECONDS);
                c.read(1, lba, in).get(120, TimeUnit.SECONDS);
                assertEquals(-1, in.mismatch(out), size + " bytes at LBA " + lba + " read back differently");
                lba += size / 512;
            }
            // the same buffers again: their registrations are reused, not made anew
            int registered = c.rdmaRegistrations();
            assertTrue(registered >= 2, "registrations: " + registered);
            MemorySegment again = random(arena, 8192, 7);
            c.write(1, lba, again).get(60, TimeUnit.SECONDS);
            int afterOne = c.rdmaRegistrations();
            c.write(1, lba, again).get(60, TimeUnit.SECONDS);
            c.read(1, lba, again).get(60, TimeUnit.SECONDS);
            assertEquals(afterOne, c.rdmaRegistrations(), "a buffer used again reuses its registration");
            // heap buffers travel through a registered bounce copy
            byte[] heapOut = new byte[64 * 1024];
            new SplittableRandom(11).nextBytes(heapOut);
            byte[] heapIn = new byte[heapOut.length];
            c.write(1, lba + 64, MemorySegment.ofArray(heapOut)).get(60, TimeUnit.SECONDS);
            c.read(1, lba + 64, MemorySegment.ofArray(heapIn)).get(60, TimeUnit.SECONDS);
            assertTrue(java.util.Arrays.equals(heapOut, heapIn), "heap buffer read back differently");
            // the bounce buffer is pooled: more heap I/O of the size registers nothing more
            long bounces = c.rdmaBounceRegistrations();
            assertTrue(bounces >= 1, "bounce registrations: " + bounces);
            for (int i = 0; i < 20; i++) {
                new SplittableRandom(100 + i).nextBytes(heapOut);
                c.write(1, lba + 64, MemorySegment.ofArray(heapOut)).get(60, TimeUnit.SECONDS);
                c.read(1, lba + 64, MemorySegment.ofArray(heapIn)).get(60, TimeUnit.SECONDS);
                assertTrue(java.util.Arrays.equals(heapOut, heapIn), "heap buffer read back differently, round " + i);
            }
            assertEquals(bounces, c.rdmaBounceRegistrations(), "pooled bounce buffers are reused");
            c.flush(1).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void manyIosInFlightOnBothQueues() throws Exception {
        try (Controller c = Controller.connect(target, nqn, options());
                Arena arena = Arena.ofShared()) {
            int n = 48;
            MemorySegment out = random(arena, n * 4096L, 99);
            MemorySegment in = arena.allocate(n * 4096L, 4096);
            long lba = BASE_LBA + (64L << 20) / 512;
            List<CompletableFuture<Void>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                fs.add(c.write(1, lba + i * 8L, out.asSlice(i * 4096L, 4096)));
            }
            CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            fs.clear();
            for (int i = 0; i < n; i++) {
                fs.add(c.read(1, lba + i * 8L, in.asSlice(i * 4096L, 4096)));
            }
            CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
            assertEquals(-1, in.mismatch(out));
        }
    }

    @Test
    void readPastTheEndAndWrongNqnAreNamed() throws Exception {
        try (Controller c = Controller.connect(target, nqn, options());
                Arena arena = Arena.ofShared()) {
            long blocks = c.namespace(1).bytes() / 512;
            var e = assertThrows(
                    java.util.concurrent.ExecutionException.class,
                    () -> c.read(1, blocks - 1, arena.allocate(4096, 4096)).get(60, TimeUnit.SECONDS));
            NvmeStatusException s = (NvmeStatusException) e.getCause();
            assertFalse(NvmeStatusException.name(false, s.sct(), s.sc()).startsWith("unknown"), s.getMessage());
        }
        NvmeStatusException e = assertThrows(
                NvmeStatusException.class,
                () -> Controller.connect(target, "nqn.2026-01.io.rdma4j:no-such-subsystem", options()));
        assertEquals(NvmeStatusException.SC_CONNECT_INVALID_PARAMETERS, e.sc(), e.getMessage());
        assertTrue(e.getMessage().contains("Connect Invalid Parameters"), e.getMessage());
    }

    @Test
    void namespaceChangeArrivesAsAnAsyncEventOverRdma() throws Exception {
        try (Controller c = Controller.connect(target, nqn, options())) {
            NvmetGuestTest.namespaceChangeArrivesAsAnAsyncEvent(c, nqn);
        }
    }

    @Test
    void targetGoneMidIoFailsOutstandingIoAndReconnectRecovers() throws Exception {
        Path link = Path.of("/sys/kernel/config/nvmet/ports/2/subsystems", nqn);
        Path subsystem = Path.of("/sys/kernel/config/nvmet/subsystems", nqn);
        assertTrue(Files.isSymbolicLink(link), link + " (port 2, rdma) is how the VM exports the subsystem over RDMA");
        try (Controller c = Controller.connect(target, nqn, options());
                Arena arena = Arena.ofShared()) {
            MemorySegment big = arena.allocate(16L << 20);
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                reads.add(c.read(1, BASE_LBA, big.asSlice(i * (1L << 20), 1L << 20)));
            }
            Files.delete(link); // nvmet drops every controller of the subsystem on that port
            int failed = 0;
            try {
                for (CompletableFuture<Void> f : reads) {
                    try {
                        f.get(150, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        assertInstanceOf(
                                NvmeException.class, e.getCause(), e.getCause().toString());
                        failed++;
                    }
                }
            } finally {
                Files.createSymbolicLink(link, subsystem);
            }
            // the 16 reads can all finish before nvmet drops the port; reads issued after the drop must fail, and
            // clearly
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (failed == 0 && System.nanoTime() < deadline) {
                try {
                    c.read(1, BASE_LBA, big.asSlice(0, 4096)).get(150, TimeUnit.SECONDS);
                    Thread.sleep(100);
                } catch (ExecutionException e) {
                    assertInstanceOf(
                            NvmeException.class, e.getCause(), e.getCause().toString());
                    failed++;
                }
            }
            assertTrue(failed > 0, "no read failed although the target went away");
            for (int i = 0; ; i++) {
                try {
                    c.reconnect();
                    break;
                } catch (NvmeConnectionException e) {
                    if (i == 20) {
                        throw e;
                    }
                    Thread.sleep(250); // the port comes back when its listener is re-created
                }
            }
            c.read(1, BASE_LBA, MemorySegment.ofArray(new byte[4096])).get(30, TimeUnit.SECONDS);
        }
    }
}
