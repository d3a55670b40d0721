package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.NativeCallException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class HostMemoryTest {
    private static final long MIB = 1 << 20;

    @Test
    void mapsZeroedMemoryAlignedToTheHugePageSize() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = HostMemory.allocate(arena, 8 * MIB + 24);
            assertEquals(8 * MIB + 24, m.byteSize());
            assertEquals(0, m.address() % HostMemory.hugePageSize(), "aligned to " + HostMemory.hugePageSize());
            assertEquals(-1, m.mismatch(arena.allocate(m.byteSize())), "zero until written");
            for (long off = 0; off + 8 <= m.byteSize(); off += 4096) {
                m.set(ValueLayout.JAVA_LONG_UNALIGNED, off, off * 31);
            }
            m.set(ValueLayout.JAVA_LONG_UNALIGNED, m.byteSize() - 8, 77);
            for (long off = 0; off + 8 < m.byteSize() - 8; off += 4096) {
                assertEquals(off * 31, m.get(ValueLayout.JAVA_LONG_UNALIGNED, off));
            }
            assertEquals(77, m.get(ValueLayout.JAVA_LONG_UNALIGNED, m.byteSize() - 8));
        }
    }

    @Test
    void faultsEveryPageInBeforeReturning() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment advised = HostMemory.allocate(arena, 16 * MIB);
            MemorySegment touched = HostMemory.allocate(arena, 16 * MIB, false);
            for (MemorySegment m : new MemorySegment[] {advised, touched}) {
                assertEquals(16 * MIB, residentBytes(m), "resident before any write");
            }
        }
    }

    @Test
    void sitsOnHugePagesWhereTheKernelOffersThem() throws IOException {
        Path enabled = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        assumeTrue(Files.isReadable(enabled), "no transparent huge pages in this kernel");
        String mode = Files.readString(enabled);
        assumeTrue(
                mode.contains("[always]") || mode.contains("[madvise]"),
                "transparent huge pages are off here: " + mode.trim());
        long fallbacksBefore = vmstat("thp_fault_fallback");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = HostMemory.allocate(arena, 16 * MIB);
            long huge = HostMemory.hugePageBytes(m);
            if (huge == 0) {
                // the kernel may decline when it cannot find free huge pages; it counts each time it does
                assumeTrue(
                        vmstat("thp_fault_fallback") == fallbacksBefore,
                        "the kernel fell back to base pages (thp_fault_fallback rose)");
            }
            assertTrue(huge > 0 && huge <= 16 * MIB, "huge page bytes " + huge);
            assertEquals(0, huge % HostMemory.hugePageSize());
        }
    }

    @Test
    void releasesTheMappingWhenTheArenaCloses() throws IOException {
        MemorySegment m;
        try (Arena arena = Arena.ofShared()) {
            m = HostMemory.allocate(arena, 4 * MIB);
            assertTrue(mapped(m.address()));
        }
        assertThrows(IllegalStateException.class, () -> m.get(ValueLayout.JAVA_BYTE, 0));
        assertFalse(mapped(m.address()), "the mapping outlived its arena");
    }

    @Test
    void memoryInsideAnotherMappingHasNoHugePagesOfItsOwn() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = HostMemory.allocate(arena, 8 * MIB);
            assertEquals(0, HostMemory.hugePageBytes(m.asSlice(4096, 4096)));
        }
    }

    @Test
    void refusesSizesThatAreNotPositive() {
        try (Arena arena = Arena.ofShared()) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> HostMemory.allocate(arena, 0));
            assertTrue(e.getMessage().contains("positive size"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> HostMemory.allocate(arena, -5));
            assertThrows(IllegalArgumentException.class, () -> HostMemory.allocate(arena, Long.MAX_VALUE));
        }
    }

    @Test
    void namesMmapAndErrnoWhenTheKernelRefuses() {
        try (Arena arena = Arena.ofShared()) {
            // more than any x86-64 or arm64 user address space (128 TiB or 256 TiB)
            NativeCallException e = assertThrows(NativeCallException.class, () -> HostMemory.allocate(arena, 1L << 50));
            assertEquals("mmap", e.function());
            assertEquals(12, e.code(), e.getMessage());
            assertTrue(
                    e.getMessage().contains("length=" + ((1L << 50) + 2 * HostMemory.hugePageSize())), e.getMessage());
        }
    }

    /** The {@code Rss} of the mapping that holds {@code m}. */
    private static long residentBytes(MemorySegment m) throws IOException {
        return smapsField(m.address(), "Rss:");
    }

    private static boolean mapped(long address) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            String[] range = line.substring(0, line.indexOf(' ')).split("-");
            if (Long.parseUnsignedLong(range[0], 16) <= address && address < Long.parseUnsignedLong(range[1], 16)) {
                return true;
            }
        }
        return false;
    }

    private static long smapsField(long start, String field) throws IOException {
        boolean inside = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            String first = line.substring(0, Math.max(0, line.indexOf(' ')));
            if (first.matches("[0-9a-f]+-[0-9a-f]+")) {
                inside = Long.parseUnsignedLong(first.substring(0, first.indexOf('-')), 16) == start;
            } else if (inside && line.startsWith(field)) {
                return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]) << 10;
            }
        }
        throw new AssertionError("no mapping starts at 0x" + Long.toHexString(start));
    }

    private static long vmstat(String key) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/vmstat"))) {
            if (line.startsWith(key + " ")) {
                return Long.parseLong(line.substring(key.length() + 1).trim());
            }
        }
        return 0;
    }
}
