package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.libfabric.ffi.FabricH;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What {@link FabricResource#close()} reports when closing fails twice: a child refuses to close, so its parent's
 * {@code fi_close} returns {@code -FI_EBUSY}. The child's failure is the cause and is thrown; the parent's is added to
 * it as suppressed. Fault injection: the parent is a {@code struct fid} whose {@code ops->close} is an upcall that
 * answers {@code -FI_EBUSY}, as a provider's object with a live child does; the child refuses in
 * {@link FabricResource#checkCanClose()}, as a queue still bound to an open endpoint does, before any native call.
 */
class CloseFailureTest {
    private static final int FI_EBUSY = 16;

    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable(); // for fi_strerror in the parent's message
    }

    private static final class Fake extends FabricResource {
        private final RuntimeException refusal;

        Fake(String what, FabricResource parent, long fid, RuntimeException refusal) {
            super(what, parent);
            this.refusal = refusal;
            opened(fid);
        }

        @Override
        void checkCanClose() {
            if (refusal != null) {
                throw refusal;
            }
        }
    }

    /** @return a {@code struct fid} whose {@code fi_close} answers {@code -FI_EBUSY} */
    private static MemorySegment busyFid(Arena arena) throws ReflectiveOperationException {
        MethodHandle busy = MethodHandles.dropArguments(MethodHandles.constant(int.class, -FI_EBUSY), 0, long.class);
        MemorySegment close = Linker.nativeLinker()
                .upcallStub(busy, FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG), arena);
        MemorySegment ops = arena.allocate(FabricH.FI_OPS);
        ops.set(ValueLayout.JAVA_LONG, 0, FabricH.FI_OPS.byteSize());
        ops.set(ValueLayout.ADDRESS, FabricH.OPS_CLOSE, close);
        MemorySegment fid = arena.allocate(FabricH.FID);
        fid.set(ValueLayout.ADDRESS, FabricH.FID_OPS, ops);
        return fid;
    }

    @Test
    void aChildRefusingToCloseIsThrownWithTheParentsFiCloseSuppressed() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            Fake domain = new Fake("domain", null, busyFid(arena).address(), null);
            IllegalStateException refusal = new IllegalStateException("still bound to an open endpoint");
            new Fake("completion queue", domain, 1, refusal); // its fid never reaches native code

            RuntimeException thrown = assertThrows(RuntimeException.class, domain::close);

            assertSame(refusal, thrown, "the child's failure, the cause, is the one thrown");
            assertEquals(1, thrown.getSuppressed().length);
            FabricException busy = assertInstanceOf(FabricException.class, thrown.getSuppressed()[0]);
            assertTrue(busy.getMessage().contains("fi_close"), busy.getMessage());
            assertTrue(domain.isOpen(), "a domain whose fi_close failed stays open");
        }
    }
}
