package io.rdma4j.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * errno capture for calls that return NULL or -1 and set errno ({@code ibv_reg_mr}, {@code ibv_create_qp}). Bind such a
 * call with {@link #OPTION}; pass a capture segment owned by the calling object or thread as its first argument. Calls
 * that return the error number themselves ({@code ibv_post_send}, libfabric's {@code -FI_*}) do not need it.
 */
public final class Errno {
    /** The linker option that makes a downcall take a capture segment as its first parameter. */
    public static final Linker.Option OPTION = Linker.Option.captureCallState("errno");

    public static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private Errno() {}

    /** A capture segment for one owner; never share one between threads. */
    public static MemorySegment newCapture(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /** errno as captured by the last call that used {@code capture}. */
    public static int read(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }
}
