package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.cuda.ffi.Posix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * What a {@link GpuBuffer} checks in Java before any driver call: copy bounds on both sides, native and live host
 * memory, and the page-aligned dma-buf range. The buffer here has no context: every case must fail before using one.
 */
class GpuBufferChecksTest {
    private static final long PAGE = 4096;
    private final GpuBuffer buffer =
            new GpuBuffer(null, 0x7f00_0000_1000L, 8192, 0x7f00_0000_0000L, 2L << 20, 1, false);

    @Test
    void rejectsCopiesOutsideEitherSideBeforeCallingTheDriver() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(4096);
            var e = assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyFromHost(host, 0, 8000, 256));
            assertTrue(e.getMessage().contains("GPU buffer of 8192 bytes"), e.getMessage());
            e = assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyToHost(0, host, 4000, 256));
            assertTrue(e.getMessage().contains("target host segment"), e.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyFromHost(host, -1, 0, 16));
            assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyFromHost(host, 0, Long.MAX_VALUE, 16));
            assertThrows(IndexOutOfBoundsException.class, () -> buffer.copyToHost(0, host, 0, -5));
        }
    }

    @Test
    void rejectsHeapReadOnlyAndFreedHostMemory() {
        var e = assertThrows(
                IllegalArgumentException.class, () -> buffer.copyFromHost(MemorySegment.ofArray(new byte[16])));
        assertTrue(e.getMessage().contains("heap segment"), e.getMessage());
        MemorySegment freed;
        try (Arena arena = Arena.ofConfined()) {
            freed = arena.allocate(16);
            MemorySegment ro = freed.asReadOnly();
            assertThrows(IllegalArgumentException.class, () -> buffer.copyToHost(ro));
        }
        assertThrows(IllegalStateException.class, () -> buffer.copyToHost(freed));
    }

    @Test
    void dmaBufRangeCoversWholePagesInsideTheAllocation() {
        // buffer at base + 0x1234, 100 bytes: pages [base, base + 4096), the buffer at offset 0x1234 - 0x1000
        var r = GpuBuffer.exportRange(0x10_0000_1234L, 100, 0x10_0000_0000L, 2L << 20, PAGE);
        assertEquals(0x10_0000_1000L, r.base());
        assertEquals(PAGE, r.length());
        assertEquals(0x234, r.offset());
        // crossing a page boundary takes both pages
        r = GpuBuffer.exportRange(0x10_0000_1ff0L, 32, 0x10_0000_0000L, 2L << 20, PAGE);
        assertEquals(2 * PAGE, r.length());
        // exactly one whole allocation
        r = GpuBuffer.exportRange(0x10_0000_0000L, 2L << 20, 0x10_0000_0000L, 2L << 20, PAGE);
        assertEquals(new GpuBuffer.ExportRange(0x10_0000_0000L, 2L << 20, 0), r);
    }

    @Test
    void dmaBufRangeLeavingTheAllocationIsRejectedWithTheFix() {
        // a 256-byte allocation inside a page another allocation shares
        var e = assertThrows(
                IllegalStateException.class,
                () -> GpuBuffer.exportRange(0x10_0000_0100L, 256, 0x10_0000_0100L, 256, PAGE));
        assertTrue(e.getMessage().contains("CudaContext.allocate"), e.getMessage());
        assertThrows(
                IllegalStateException.class,
                () -> GpuBuffer.exportRange(0x10_0000_0000L, (2L << 20) + 1, 0x10_0000_0000L, 2L << 20, PAGE));
    }

    @Test
    void pageSizeIsTheHostsAndCloseReportsABadFd() throws Exception {
        Process p = new ProcessBuilder("getconf", "PAGESIZE")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        assertEquals(0, p.waitFor());
        assertEquals(Long.parseLong(out), Posix.pageSize());
        assertEquals(-1, Posix.close(-1));
        var e = assertThrows(IllegalStateException.class, () -> new DmaBuf(-1, 0, 4096, 0, 0, 16).close());
        assertTrue(e.getMessage().contains("close(-1)"), e.getMessage());
    }
}
