package io.rdma4j.ffi;

import io.rdma4j.Rdma4jException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Calls through C ops tables. libfabric's data path ({@code fi_write}, {@code fi_cq_read}) and libibverbs'
 * ({@code ibv_post_send}, {@code ibv_poll_cq}) are {@code static inline} functions that read a function pointer from an
 * ops struct and call it: there is no symbol to look up. A binding builds one address-taking downcall handle per
 * signature ({@link #indirect}) and, per object, reads the pointer once ({@link #function}) and keeps it.
 */
public final class OpsTable {
    private static final Linker LINKER = Linker.nativeLinker();

    private OpsTable() {}

    /** A downcall handle whose first parameter is the target function's address. */
    public static MethodHandle indirect(FunctionDescriptor descriptor, Linker.Option... options) {
        return LINKER.downcallHandle(descriptor, options);
    }

    /**
     * Reads the function pointer at {@code offset} in the ops struct at {@code ops}; a NULL entry means the provider
     * does not implement the operation and fails with a message naming it.
     */
    public static MemorySegment function(MemorySegment ops, long offset, String cName) {
        if (ops == null || ops.equals(MemorySegment.NULL)) {
            throw new Rdma4jException("cannot call " + cName + ": its ops table is NULL");
        }
        MemorySegment table = ops.byteSize() >= offset + ValueLayout.ADDRESS.byteSize()
                ? ops
                : ops.reinterpret(offset + ValueLayout.ADDRESS.byteSize());
        MemorySegment fn = table.get(ValueLayout.ADDRESS, offset);
        if (fn.equals(MemorySegment.NULL)) {
            throw new Rdma4jException(cName + " is not implemented by this provider (its ops entry is NULL)");
        }
        return fn;
    }

    /** Like {@link #function} but returns NULL instead of failing, for optional operations. */
    public static MemorySegment functionOrNull(MemorySegment ops, long offset) {
        if (ops == null || ops.equals(MemorySegment.NULL)) {
            return MemorySegment.NULL;
        }
        return ops.reinterpret(offset + ValueLayout.ADDRESS.byteSize()).get(ValueLayout.ADDRESS, offset);
    }
}
