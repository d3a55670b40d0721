package io.rdma4j.engine.internal;

import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * The engine's argument checks, throwing what {@link io.rdma4j.Rdma4jException} documents: a null argument a
 * {@link NullPointerException}, a bad value an {@link InvalidArgumentException}, freed memory a
 * {@link ClosedException}. (The backends' {@link io.rdma4j.ffi.Segments} keeps the JDK's types for their own callers.)
 */
final class Args {
    private Args() {}

    /** Fails unless {@code segment} is set and its arena is open: freed memory must not reach a NIC. */
    static MemorySegment alive(MemorySegment segment, String what) {
        Objects.requireNonNull(segment, what);
        if (!segment.scope().isAlive()) {
            throw new ClosedException(
                    "the arena of " + what,
                    "its memory was freed; register and use memory only while its arena is open");
        }
        return segment;
    }

    /** As {@link #alive}, and fails unless the memory is native (a heap array cannot be registered with a NIC). */
    static MemorySegment nativeMemory(MemorySegment segment, String what) {
        alive(segment, what);
        if (!segment.isNative()) {
            throw new InvalidArgumentException(what + " is a heap segment: allocate it from an Arena"
                    + " (Arena.ofShared().allocate(...)) so a NIC can reach it");
        }
        return segment;
    }

    /** {@return whether {@code [offset, offset + length)} lies inside {@code [0, size)}} Overflow-safe. */
    static boolean inside(long size, long offset, long length) {
        return offset >= 0 && length >= 0 && offset <= size - length;
    }

    /** Fails unless {@code [offset, offset + length)} lies inside {@code [0, size)}. */
    static void range(long size, long offset, long length, String what) {
        if (!inside(size, offset, length)) {
            throw new InvalidArgumentException(what + ": range [" + offset + ", " + offset + " + " + length
                    + ") is outside its " + size + " bytes: pass an offset and length inside it");
        }
    }

    /**
     * As {@link #range(long, long, long, String)} with {@code what} = {@code prefix + buffer}, built only on failure:
     * the data path checks every transfer and must not build a message for each.
     */
    static void range(long size, long offset, long length, String prefix, Object buffer) {
        if (!inside(size, offset, length)) {
            range(size, offset, length, prefix + buffer);
        }
    }

    /** Fails unless {@code [offset, offset + length)} lies inside a live {@code segment}. */
    static void range(MemorySegment segment, long offset, long length, String what) {
        alive(segment, what);
        range(segment.byteSize(), offset, length, what);
    }
}
