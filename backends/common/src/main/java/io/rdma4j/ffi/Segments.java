package io.rdma4j.ffi;

import java.lang.foreign.MemorySegment;

/** Checks done in Java before any native call touches memory: a native library cannot report these without crashing. */
public final class Segments {
    private Segments() {}

    /** Fails if the segment's arena is closed: its memory is freed and must not reach a NIC or a native call. */
    public static MemorySegment requireAlive(MemorySegment segment, String what) {
        if (segment == null) {
            throw new IllegalArgumentException(what + " is null");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException(
                    what + " was freed (its arena is closed): register and use memory only while its arena is open");
        }
        return segment;
    }

    /** Fails unless {@code [offset, offset + length)} lies inside a live {@code segment}. */
    public static void checkRange(MemorySegment segment, long offset, long length, String what) {
        requireAlive(segment, what);
        if (offset < 0 || length < 0 || offset > segment.byteSize() - length) {
            throw new IndexOutOfBoundsException(what + ": range [" + offset + ", " + offset + " + " + length
                    + ") is outside its " + segment.byteSize() + " bytes");
        }
    }

    /**
     * Fails unless {@code [offset, offset + length)} lies inside {@code [0, size)}; for remote regions known by size
     * only.
     */
    public static void checkRange(long size, long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException(what + ": range [" + offset + ", " + offset + " + " + length
                    + ") is outside its " + size + " bytes");
        }
    }

    /** Fails unless the segment is native memory (a heap array cannot be registered with a NIC). */
    public static MemorySegment requireNative(MemorySegment segment, String what) {
        requireAlive(segment, what);
        if (!segment.isNative()) {
            throw new IllegalArgumentException(
                    what + " is a heap segment: allocate it from an Arena (Arena.ofShared().allocate(...))"
                            + " so a NIC can reach it");
        }
        return segment;
    }
}
