package io.rdma4j.engine;

import io.rdma4j.NativeCallException;
import io.rdma4j.ffi.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Host memory laid out for transfers: an anonymous mapping aligned to the huge page size, backed by transparent huge
 * pages where the kernel's setting allows ({@code always} or {@code madvise} in
 * {@code /sys/kernel/mm/transparent_hugepage/enabled}), and faulted in before it is returned.
 *
 * <p>Memory from {@link Arena#allocate} sits on 4 KiB pages. A transfer that was the first to reach such memory from
 * another process or from the kernel (shm's cross-memory copy, a socket's receive) paid for every page on the 2-vCPU
 * virtual machine this was measured on: 4.5-5 s for the first 1 GiB write of {@code ./rdma4j demo}, 0.2 s for the same
 * write repeated, 0.3 s for the first one on huge pages. Huge pages also need 512 times fewer translations in a NIC's
 * memory table.
 *
 * <p>The mapping is released when {@code arena} closes; as with any memory a NIC may touch, close it only after its
 * registration is gone.
 */
public final class HostMemory {
    private static final Path HUGE_PAGE_SIZE = Path.of("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    private static final Path SMAPS = Path.of("/proc/self/smaps");
    private static final long DEFAULT_HUGE_PAGE = 2L << 20;
    private static final long PAGE = 4096;
    private static final long HUGE_PAGE = readHugePageSize();

    private HostMemory() {}

    /**
     * Maps {@code bytes} of zeroed host memory aligned to {@link #hugePageSize()}, asks for transparent huge pages, and
     * faults every page in (with {@code MADV_POPULATE_WRITE}, or by touching each page where the kernel, older than
     * 5.14, or a sandbox refuses that).
     *
     * @param arena releases the mapping when it closes
     * @param bytes at least 1
     * @return the memory, {@code bytes} long
     * @throws IllegalArgumentException when {@code bytes} is not positive
     * @throws io.rdma4j.NativeCallException when the kernel refuses the mapping or cannot fault it in (out of memory)
     */
    public static MemorySegment allocate(Arena arena, long bytes) {
        return allocate(arena, bytes, true);
    }

    /**
     * As {@link #allocate(Arena, long)}; {@code populateAdvice} false faults pages in by touching them (a test hook).
     */
    static MemorySegment allocate(Arena arena, long bytes, boolean populateAdvice) {
        if (bytes < 1) {
            throw new IllegalArgumentException("host memory needs a positive size, got " + bytes + " bytes");
        }
        if (bytes > Long.MAX_VALUE - 2 * HUGE_PAGE) {
            throw new IllegalArgumentException("host memory of " + bytes + " bytes is more than a process can map");
        }
        long length = roundUp(bytes, PAGE);
        // slack on both sides that is never advised or touched: the advised range cannot merge with a neighbouring
        // mapping, so /proc/self/smaps reports exactly its huge pages (hugePageBytes)
        long mapped = length + 2 * HUGE_PAGE;
        long base = Libc.mmapAnonymous(mapped);
        long start = roundUp(base + PAGE, HUGE_PAGE);
        try {
            // a kernel without transparent huge pages says EINVAL: the memory is then on base pages, as it would be
            Libc.madvise(start, length, Libc.MADV_HUGEPAGE);
            populate(start, length, populateAdvice);
        } catch (RuntimeException | Error e) {
            Libc.munmap(base, mapped);
            throw e;
        }
        return MemorySegment.ofAddress(start).reinterpret(bytes, arena, unused -> Libc.munmap(base, mapped));
    }

    private static void populate(long start, long length, boolean populateAdvice) {
        int errno = populateAdvice ? Libc.madvise(start, length, Libc.MADV_POPULATE_WRITE) : Libc.EINVAL;
        while (errno == Libc.EINTR) { // a signal came first; the pages faulted in so far stay
            errno = Libc.madvise(start, length, Libc.MADV_POPULATE_WRITE);
        }
        if (errno == 0) {
            return;
        }
        if (errno == Libc.ENOMEM || errno == Libc.EFAULT) {
            throw new NativeCallException(
                    "madvise",
                    "length=" + length + ", MADV_POPULATE_WRITE",
                    errno,
                    Libc.strerror(errno),
                    "the machine cannot back " + length + " bytes now: allocate less, or free memory");
        }
        // EINVAL before Linux 5.14, EPERM or ENOSYS where a sandbox filters the call: one write per page faults it in
        // (a write to a page of a huge page maps all of it)
        MemorySegment s = MemorySegment.ofAddress(start).reinterpret(length);
        for (long off = 0; off < length; off += PAGE) {
            s.set(ValueLayout.JAVA_BYTE, off, (byte) 0);
        }
    }

    /**
     * {@return the transparent huge page size this kernel uses (2 MiB on x86-64), read from
     * {@code /sys/kernel/mm/transparent_hugepage/hpage_pmd_size}; 2 MiB where it cannot be read}
     */
    public static long hugePageSize() {
        return HUGE_PAGE;
    }

    private static long readHugePageSize() {
        try {
            long v = Long.parseLong(
                    Files.readString(HUGE_PAGE_SIZE, StandardCharsets.US_ASCII).trim());
            // a power of two from 64 KiB to 1 GiB, or the file is not what this reads it as
            return v >= 1 << 16 && v <= 1L << 30 && Long.bitCount(v) == 1 ? v : DEFAULT_HUGE_PAGE;
        } catch (IOException | NumberFormatException e) {
            return DEFAULT_HUGE_PAGE;
        }
    }

    /**
     * How much of {@code segment} the kernel holds on transparent huge pages now, from {@code /proc/self/smaps}: the
     * {@code AnonHugePages} of the mappings that lie inside it. Exact for memory from {@link #allocate}; 0 for memory
     * inside a larger mapping.
     *
     * @return bytes, or -1 when {@code /proc/self/smaps} cannot be read
     */
    public static long hugePageBytes(MemorySegment segment) {
        List<String> lines;
        try {
            lines = Files.readAllLines(SMAPS, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return -1;
        }
        long from = segment.address();
        long to = from + segment.byteSize();
        long total = 0;
        boolean inside = false;
        for (String line : lines) {
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash > 0 && space > dash && isHex(line, 0, dash)) {
                long start = Long.parseUnsignedLong(line, 0, dash, 16);
                long end = isHex(line, dash + 1, space) ? Long.parseUnsignedLong(line, dash + 1, space, 16) : 0;
                inside = start >= from && end <= roundUp(to, PAGE) && end > start;
            } else if (inside && line.startsWith("AnonHugePages:")) {
                total += kilobytes(line) << 10;
            }
        }
        return total;
    }

    private static boolean isHex(String s, int from, int to) {
        if (to - from < 1 || to - from > 16) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (Character.digit(s.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }

    /** {@code "AnonHugePages: 2048 kB"} gives 2048; anything else 0. */
    private static long kilobytes(String line) {
        String[] f = line.substring(line.indexOf(':') + 1).trim().split("\\s+");
        try {
            return f.length == 2 && f[1].equals("kB") ? Math.max(0, Long.parseLong(f[0])) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static long roundUp(long v, long to) {
        return (v + to - 1) & -to;
    }
}
