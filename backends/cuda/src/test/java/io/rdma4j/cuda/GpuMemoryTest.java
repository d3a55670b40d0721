package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.ClosedException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On a machine with a GPU (tag {@code gpu}: excluded from host Surefire runs; {@code scripts/gpu-check} runs it on the
 * device machine). Skips with the probe's reason where CUDA is not available.
 */
@Tag("gpu")
class GpuMemoryTest {
    private static CudaContext context;

    @BeforeAll
    static void retain() {
        if (Cuda.isAvailable()) {
            context = Cuda.device(0).retainPrimaryContext();
        }
    }

    @BeforeEach
    void requireGpu() {
        assumeTrue(
                Cuda.isAvailable(),
                () -> "no usable GPU: " + Cuda.unavailabilityCause().getMessage());
    }

    @AfterAll
    static void release() {
        if (context != null) {
            context.close();
        }
    }

    private static MemorySegment pattern(Arena arena, long length, int seed) {
        MemorySegment s = arena.allocate(length, 8);
        for (long i = 0; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return s;
    }

    @Test
    void copiesKnownDataInAndOut() {
        long length = (1 << 20) + 3;
        try (Arena arena = Arena.ofConfined();
                GpuBuffer gpu = context.allocate(length)) {
            assertTrue(gpu.isOwned());
            assertEquals(length, gpu.length());
            assertEquals(0, Long.remainderUnsigned(gpu.allocationSize(), CudaContext.ALLOCATION_GRANULE));
            MemorySegment in = pattern(arena, length, 7);
            gpu.copyFromHost(in);
            MemorySegment out = arena.allocate(length);
            gpu.copyToHost(out);
            assertEquals(-1, in.mismatch(out));
            // a slice in the middle lands where asked
            MemorySegment part = pattern(arena, 4099, 99);
            gpu.copyFromHost(part, 0, 12345, 4099);
            MemorySegment back = arena.allocate(4099);
            gpu.copyToHost(12345, back, 0, 4099);
            assertEquals(-1, part.mismatch(back));
            gpu.copyToHost(12344, back, 0, 1);
            assertEquals(in.get(ValueLayout.JAVA_BYTE, 12344), back.get(ValueLayout.JAVA_BYTE, 0));
        }
    }

    @Test
    void adoptsAForeignPointerAndFindsItsAllocation() {
        try (Arena arena = Arena.ofConfined();
                GpuBuffer owner = context.allocate(4 << 20)) {
            owner.copyFromHost(pattern(arena, 4 << 20, 3));
            try (GpuBuffer adopted = context.adopt(owner.address() + 65536, 8192)) {
                assertTrue(!adopted.isOwned());
                assertEquals(owner.address(), adopted.allocationBase());
                assertEquals(owner.allocationSize(), adopted.allocationSize());
                assertEquals(owner.bufferId(), adopted.bufferId());
                assertEquals(owner.pciAddress(), adopted.pciAddress());
                MemorySegment seen = arena.allocate(8192);
                adopted.copyToHost(seen);
                MemorySegment expected = arena.allocate(8192);
                owner.copyToHost(65536, expected, 0, 8192);
                assertEquals(-1, seen.mismatch(expected));
            }
            // closing the adopted view did not free the memory
            owner.copyToHost(0, arena.allocate(16), 0, 16);
            var e = assertThrows(
                    IndexOutOfBoundsException.class,
                    () -> context.adopt(owner.address() + 4096, owner.allocationSize()));
            assertTrue(e.getMessage().contains("leaves its allocation"), e.getMessage());
            MemorySegment host = arena.allocate(64);
            var notGpu = assertThrows(IllegalArgumentException.class, () -> context.adopt(host.address(), 64));
            assertTrue(notGpu.getMessage().contains("not CUDA device memory"), notGpu.getMessage());
        }
    }

    @Test
    void exportsADmaBufOfWholePages() throws IOException {
        assumeTrue(
                context.device().dmaBufSupported(),
                "this GPU/driver does not support dma-buf export (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED=0)");
        try (GpuBuffer gpu = context.allocate(3 << 20);
                DmaBuf buf = gpu.exportDmaBuf()) {
            assertTrue(buf.fd() >= 0, buf.toString());
            assertEquals(gpu.address(), buf.iova());
            assertEquals(gpu.address(), buf.base() + buf.offset());
            assertEquals(0, buf.exportedLength() % io.rdma4j.cuda.ffi.Posix.pageSize());
            String target =
                    Files.readSymbolicLink(Path.of("/proc/self/fd/" + buf.fd())).toString();
            assertTrue(target.contains("dmabuf"), "fd " + buf.fd() + " is " + target + ", not a dma-buf");
            System.out.println("dma-buf: " + buf + " -> " + target);
        }
    }

    @Test
    void mapsEveryGpuToThePciAddressNvidiaSmiReports() throws Exception {
        Process p;
        try {
            p = new ProcessBuilder("nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader")
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            assumeTrue(false, "nvidia-smi is not installed: " + e.getMessage());
            return;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "nvidia-smi failed: " + out);
        Set<String> smi = new TreeSet<>();
        out.lines().filter(l -> !l.isBlank()).forEach(l -> smi.add(PciAddress.normalize(l)));
        Set<String> cuda = new TreeSet<>();
        for (CudaDevice d : Cuda.devices()) {
            cuda.add(d.pciAddress());
            System.out.println(d + " gpuDirectRdma=" + d.gpuDirectRdmaSupported() + " dmaBuf=" + d.dmaBufSupported());
        }
        System.out.println("nvidia-smi: " + smi + ", CUDA: " + cuda);
        if (System.getenv(CudaVisibleDevices.VARIABLE) == null) {
            assertEquals(smi, cuda); // nvidia-smi ignores CUDA_VISIBLE_DEVICES
        } else {
            assertTrue(smi.containsAll(cuda), "CUDA " + cuda + " vs nvidia-smi " + smi);
        }
        assertEquals(Cuda.deviceCount(), cuda.size(), "two ordinals share a PCI address");
    }

    @Test
    void synchronizesAndFlushesGpuDirectWrites() {
        context.synchronize();
        context.synchronizeStream(0);
        if (context.device().flushGpuDirectRdmaWritesSupported()) {
            context.flushGpuDirectRdmaWrites(FlushScope.TO_OWNER);
            context.flushGpuDirectRdmaWrites(FlushScope.TO_ALL_DEVICES);
        }
        assertTrue(
                Cuda.driverVersion() >= 11030,
                "cuFlushGPUDirectRDMAWrites needs CUDA 11.3+, driver is " + Cuda.driverVersion());
    }

    @Test
    void outOfMemoryIsACudaExceptionNamingCodeAndFunction() {
        var e = assertThrows(CudaException.class, () -> context.allocate(1L << 52));
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
        assertEquals(2, e.code());
        assertTrue(e.getMessage().startsWith("cuMemAlloc_v2(bytesize="), e.getMessage());
    }

    @Test
    void closingTheContextClosesItsBuffersFirst() {
        CudaContext own = Cuda.device(0).retainPrimaryContext();
        try {
            GpuBuffer a = own.allocate(4096);
            GpuBuffer b = own.adopt(a.address(), 4096);
            own.close();
            assertTrue(a.isClosed() && b.isClosed());
            assertThrows(
                    ClosedException.class, () -> a.copyToHost(Arena.ofAuto().allocate(16)));
            assertThrows(ClosedException.class, () -> own.allocate(16));
        } finally {
            own.close(); // idempotent
        }
        // the shared primary context is still retained by the class fixture
        try (GpuBuffer c = context.allocate(16)) {
            assertNotEquals(0, c.address());
        }
    }
}
