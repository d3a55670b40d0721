package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.LibIbverbs;
import java.lang.foreign.MemorySegment;

/** An address handle ({@code struct ibv_ah}): the destination of UD sends. */
public final class AddressHandle extends NativeObject {
    AddressHandle(ProtectionDomain pd, MemorySegment ah) {
        super("AddressHandle", ah, pd);
    }

    @Override
    void destroy() {
        try {
            int rc = (int) LibIbverbs.ibv_destroy_ah.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_destroy_ah", "", rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
