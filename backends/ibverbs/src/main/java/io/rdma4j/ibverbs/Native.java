package io.rdma4j.ibverbs;

import io.rdma4j.ffi.Structs;
import java.lang.foreign.MemorySegment;

/** Small helpers for calling through method handles. */
final class Native {
    private Native() {}

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    static String string(MemorySegment p) {
        return Structs.string(p);
    }

    static boolean isNull(MemorySegment p) {
        return p == null || p.equals(MemorySegment.NULL);
    }

    static String hex(MemorySegment p) {
        return "0x" + Long.toHexString(p.address());
    }
}
