package io.rdma4j.ibverbs;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RDMA_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.DeviceRegistrationException;
import io.rdma4j.engine.spi.DeviceMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code ibv_reg_dmabuf_mr} and the GPU registration path ({@link ProtectionDomain#registerDevice}) against the real
 * libibverbs and Soft-RoCE in the test VM, with real dma-buf file descriptors from the kernel's {@code vgem} driver.
 * Soft-RoCE has no dma-buf support (rdma-core's rxe provider does not implement {@code reg_dmabuf_mr}), so every
 * dma-buf registration on rxe0 fails with {@code EOPNOTSUPP}: the tests prove that this error comes through intact and
 * that the fallback to {@code ibv_reg_mr} on the memory's address takes over, or that both failures are reported in one
 * error.
 */
@Tag("testvm")
class DmabufGuestTest {
    private static final int EOPNOTSUPP = 95;
    private static final long SIZE = 64 << 10;
    private Context ctx;
    private ProtectionDomain pd;
    private Arena arena;
    private Vgem vgem;
    private final List<Integer> fds = new ArrayList<>();

    @BeforeEach
    void open() throws Exception {
        ctx = Rxe.open();
        pd = ctx.allocPd();
        arena = Arena.ofShared();
        vgem = Vgem.open();
    }

    @AfterEach
    void close() {
        for (int fd : fds) {
            Vgem.closeFd(fd);
        }
        if (vgem != null) {
            vgem.close();
        }
        if (ctx != null) {
            ctx.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    private int dmabuf() throws Exception {
        int fd = vgem.dmabuf(SIZE);
        fds.add(fd);
        assertTrue(Vgem.isDmabuf(fd), "vgem's PRIME export is not a dma-buf");
        return fd;
    }

    @Test
    void dmabufRegistrationOnRxeFailsWithTheProvidersErrno() throws Exception {
        int fd = dmabuf();
        var e = assertThrows(VerbsException.class, () -> pd.registerDmabuf(fd, 0, SIZE, 0x10_0000_0000L, Rxe.ACCESS));
        assertEquals("ibv_reg_dmabuf_mr", e.function());
        assertEquals(EOPNOTSUPP, e.code(), e.getMessage());
        assertTrue(
                e.getMessage()
                                .startsWith("ibv_reg_dmabuf_mr(fd=" + fd + ", offset=0, len=" + SIZE
                                        + ", iova=0x1000000000")
                        && e.getMessage().contains("error 95 (Operation not supported)"),
                e.getMessage());
    }

    @Test
    void aClosedFdNumberReachesTheLibraryAndFails() throws Exception {
        int fd = vgem.dmabuf(SIZE);
        Vgem.closeFd(fd);
        var e = assertThrows(VerbsException.class, () -> pd.registerDmabuf(fd, 0, SIZE, 0, Rxe.ACCESS));
        // rxe refuses dma-buf registration before the kernel looks the fd up, so EOPNOTSUPP, not EBADF, comes back
        assertEquals(EOPNOTSUPP, e.code(), e.getMessage());
    }

    @Test
    void argumentsAreCheckedBeforeTheLibraryOnARealDomain() throws Exception {
        int fd = dmabuf();
        var neg = assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(-1, 0, SIZE, 0, Rxe.ACCESS));
        assertTrue(neg.getMessage().contains("fd must be >= 0"), neg.getMessage());
        assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(fd, 0, 0, 0, Rxe.ACCESS));
        var bits = assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(fd, 0, SIZE, 0, 1 << 12));
        assertTrue(bits.getMessage().contains("unknown bits 0x1000"), bits.getMessage());
        var lw = assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(fd, 0, SIZE, 0, 2));
        assertTrue(lw.getMessage().contains("IBV_ACCESS_LOCAL_WRITE"), lw.getMessage());
        pd.close();
        assertThrows(io.rdma4j.ClosedException.class, () -> pd.registerDmabuf(fd, 0, SIZE, 0, Rxe.ACCESS));
    }

    @Test
    void deviceRegistrationFallsBackToRegMrAndTheNicWritesThroughIt() throws Exception {
        MemorySegment target = arena.allocate(SIZE, 4096);
        HostDeviceMemory device = new HostDeviceMemory(target.address(), SIZE, dmabuf());
        try (MemoryRegion mr = pd.registerDevice(device, Rxe.ACCESS)) {
            assertNull(mr.segment(), "a device region has no Java segment");
            assertEquals(target.address(), mr.address());
            assertEquals(SIZE, mr.length());
            assertEquals(1, device.exports, "the dma-buf path is tried first");
            CompletionQueue cq = ctx.createCq(16);
            QueuePair a = pd.createQp(QpInitAttr.rc(cq).maxSendWr(4).maxRecvWr(4));
            QueuePair b = pd.createQp(QpInitAttr.rc(cq).maxSendWr(4).maxRecvWr(4));
            Rxe.connect(a, b, Rxe.gidIndex(ctx));
            MemoryRegion src = pd.register(arena.allocate(SIZE, 4096), Rxe.ACCESS);
            for (int i = 0; i < SIZE / 4; i++) {
                src.segment().setAtIndex(ValueLayout.JAVA_INT, i, i * 31 + 7);
            }
            try (SendWr wr = new SendWr(1);
                    WorkCompletions wcs = new WorkCompletions(4)) {
                assertEquals(
                        0, a.postSend(wr.write(9, src, 0, (int) SIZE, mr.address(), mr.rkey(), IBV_SEND_SIGNALED)));
                Rxe.await(cq, wcs, 1, 30_000, (w, i) -> {
                    w.throwIfError(i);
                    assertEquals(IBV_WC_RDMA_WRITE, w.opcode(i));
                });
            }
            assertEquals(-1, target.mismatch(src.segment()), "the NIC's write through the device registration landed");
        }
    }

    @Test
    void whenBothPathsFailOneErrorNamesBothWithTheFix() throws Throwable {
        // an address the kernel cannot pin (PROT_NONE), as a GPU address is to a NIC driver without nvidia_peermem
        long reserved = mmapNoAccess(SIZE);
        try {
            HostDeviceMemory device = new HostDeviceMemory(reserved, SIZE, dmabuf());
            var e = assertThrows(DeviceRegistrationException.class, () -> pd.registerDevice(device, Rxe.ACCESS));
            String m = e.getMessage();
            assertTrue(m.contains("ibv_reg_dmabuf_mr(fd=") && m.contains("error 95 (Operation not supported)"), m);
            assertTrue(
                    m.contains("ibv_reg_mr_iova2(addr=0x" + Long.toHexString(reserved)) && m.contains("failed: error "),
                    m);
            assertTrue(m.contains("modprobe nvidia_peermem") && m.contains("dma-buf support"), m);
            assertEquals(1, device.exports);
        } finally {
            munmap(reserved, SIZE);
        }
    }

    /**
     * The engine backend's {@code registerDevice} on rxe0: every lane's domain goes dma-buf first, falls back to
     * {@code ibv_reg_mr}, and a write posted from the device registration lands in the peer's memory; with an
     * unpinnable address the backend throws the one error, which is what makes the engine stage instead.
     */
    @Test
    void engineBackendRegistersDeviceMemoryAndWritesFromIt() throws Throwable {
        var provider = new io.rdma4j.ibverbs.engine.IbverbsEngineProvider();
        var cfg = new io.rdma4j.engine.spi.BackendConfig(
                null, 1, 16, io.rdma4j.engine.spi.BackendOptions.DEFAULTS.withDevice(Rxe.DEVICE));
        try (var a = provider.open(cfg);
                var b = provider.open(cfg)) {
            int ca = a.prepareConnection(0);
            int cb = b.prepareConnection(0);
            a.connect(0, ca, b.endpointInfo(0, cb));
            b.connect(0, cb, a.endpointInfo(0, ca));
            MemorySegment source = arena.allocate(SIZE, 4096);
            for (int i = 0; i < SIZE / 4; i++) {
                source.setAtIndex(ValueLayout.JAVA_INT, i, i ^ 0x2468ACE);
            }
            HostDeviceMemory device = new HostDeviceMemory(source.address(), SIZE, dmabuf());
            var rs = a.registerDevice(device);
            assertEquals(source.address(), rs.address());
            assertEquals(1, device.exports, "the dma-buf path is tried first");
            MemorySegment target = arena.allocate(SIZE, 4096);
            var rd = b.register(target);
            var out = new io.rdma4j.engine.spi.Completions(4);
            assertEquals(
                    0,
                    a.postWrite(0, ca, rs.handle(), source.address(), SIZE, rd.remoteAddress(0), rd.remoteKey(0), 5));
            long deadline = System.nanoTime() + 60_000_000_000L;
            int got = 0;
            while (got == 0) {
                got = a.poll(0, out);
                assertTrue(System.nanoTime() < deadline, "no completion for the write from device memory");
            }
            assertEquals(0, out.status[0], out.errorText[0]);
            assertEquals(5, out.context[0]);
            assertEquals(-1, target.mismatch(source), "the write from the device registration did not land");
            rs.close();

            long reserved = mmapNoAccess(SIZE);
            try {
                var e = assertThrows(
                        DeviceRegistrationException.class,
                        () -> a.registerDevice(new HostDeviceMemory(reserved, SIZE, dmabuf())));
                assertTrue(
                        e.getMessage().contains("ibv_reg_dmabuf_mr")
                                && e.getMessage().contains("nvidia_peermem"),
                        e.getMessage());
            } finally {
                munmap(reserved, SIZE);
            }
        }
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MMAP = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("mmap"),
            FunctionDescriptor.of(
                    ValueLayout.ADDRESS,
                    ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG));
    private static final MethodHandle MUNMAP = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("munmap"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));

    private static long mmapNoAccess(long size) throws Throwable {
        // PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS
        MemorySegment p = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, size, 0, 0x02 | 0x20, -1, 0L);
        assertTrue(p.address() != -1L, "mmap failed");
        return p.address();
    }

    private static void munmap(long address, long size) throws Throwable {
        assertEquals(0, (int) MUNMAP.invokeExact(MemorySegment.ofAddress(address), size));
    }

    /**
     * A test double at the {@link DeviceMemory} boundary: "device" memory that is host memory (or an unpinnable
     * address), exporting a real vgem dma-buf. It stands in for a GPU, which the test VM has not; the GPU run
     * ({@code scripts/gpu-check}) is the real proof.
     */
    static final class HostDeviceMemory implements DeviceMemory {
        final long address;
        final long length;
        final int fd;
        int exports;

        HostDeviceMemory(long address, long length, int fd) {
            this.address = address;
            this.length = length;
            this.fd = fd;
        }

        @Override
        public Kind kind() {
            return Kind.CUDA;
        }

        @Override
        public int deviceOrdinal() {
            return 0;
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public String pciAddress() {
            return "0000:00:00.0";
        }

        @Override
        public void beforeNicRead() {}

        @Override
        public void afterNicWrite() {}

        @Override
        public void copyToHost(long offset, MemorySegment target) {
            throw new UnsupportedOperationException("not used by registration");
        }

        @Override
        public void copyFromHost(MemorySegment source, long offset) {
            throw new UnsupportedOperationException("not used by registration");
        }

        @Override
        public DmaBufHandle exportDmaBuf() {
            exports++;
            return new DmaBufHandle() {
                @Override
                public int fd() {
                    return fd;
                }

                @Override
                public long offset() {
                    return 0;
                }

                @Override
                public long length() {
                    return length;
                }

                @Override
                public long iova() {
                    return address;
                }

                @Override
                public void close() {
                    // the test closes its fds after the test
                }
            };
        }
    }
}
