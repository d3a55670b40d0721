package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * Registration arguments ({@code ibv_reg_dmabuf_mr}, {@code ibv_reg_mr} by address, device memory) fail in Java before
 * any native call. The domain wraps zeroed memory, so a check that let a call through would crash the test JVM; it is
 * never closed for the same reason. The guest test {@code DmabufGuestTest} runs the same checks on a real domain.
 */
class RegistrationArgumentsTest {
    private static final int RW =
            VerbsH.IBV_ACCESS_LOCAL_WRITE | VerbsH.IBV_ACCESS_REMOTE_WRITE | VerbsH.IBV_ACCESS_REMOTE_READ;
    private final ProtectionDomain pd = new ProtectionDomain(
            Context.wrapUnowned(Arena.ofAuto().allocate(VerbsH.IBV_CONTEXT.byteSize(), 8), "fake0"),
            Arena.ofAuto().allocate(64, 8));

    @Test
    void dmabufNeedsAnFdALengthAndValidAccess() {
        var fd = assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(-1, 0, 4096, 0, RW));
        assertTrue(
                fd.getMessage().contains("fd must be >= 0") && fd.getMessage().contains("exportDmaBuf"),
                fd.getMessage());
        var len = assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(3, 0, 0, 0, RW));
        assertTrue(len.getMessage().contains("length > 0"), len.getMessage());
        assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(3, -1, 4096, 0, RW));
        assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(3, Long.MAX_VALUE, 4096, 0, RW));
        var bits = assertThrows(IllegalArgumentException.class, () -> pd.registerDmabuf(3, 0, 4096, 0, RW | 1 << 9));
        assertTrue(bits.getMessage().contains("unknown bits 0x200"), bits.getMessage());
        var lw = assertThrows(
                IllegalArgumentException.class,
                () -> pd.registerDmabuf(3, 0, 4096, 0, VerbsH.IBV_ACCESS_REMOTE_ATOMIC));
        assertTrue(lw.getMessage().contains("add IBV_ACCESS_LOCAL_WRITE"), lw.getMessage());
    }

    @Test
    void registrationByAddressAndOfDeviceMemoryIsChecked() {
        assertThrows(IllegalArgumentException.class, () -> pd.registerAddress(0, 4096, RW));
        assertThrows(IllegalArgumentException.class, () -> pd.registerAddress(4096, 0, RW));
        assertThrows(IllegalArgumentException.class, () -> pd.registerAddress(4096, 4096, -1));
        assertThrows(IllegalArgumentException.class, () -> pd.registerDevice(null, RW));
        MemorySegment host = Arena.ofAuto().allocate(4096);
        var e = assertThrows(IllegalArgumentException.class, () -> pd.register(host, VerbsH.IBV_ACCESS_REMOTE_WRITE));
        assertTrue(e.getMessage().startsWith("ibv_reg_mr:"), e.getMessage());
        // relaxed ordering sits in the optional range and passes the Java check (no native call follows here)
        ProtectionDomain.checkAccess(RW | VerbsH.IBV_ACCESS_RELAXED_ORDERING, "ibv_reg_mr");
    }
}
