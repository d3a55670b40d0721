package io.rdma4j.ffi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.Rdma4jException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class GroundworkTest {
    @Test
    void probeOfMissingLibraryNeverThrowsAndNamesTheFix() {
        NativeLibrary lib = NativeLibrary.builder("libnope")
                .sonames("libnope-rdma4j.so.7")
                .installHint("apt-get install libnope7")
                .load();
        assertFalse(lib.isAvailable());
        assertNotNull(lib.unavailabilityCause());
        var e = assertThrows(BackendUnavailableException.class, lib::ensureAvailable);
        assertTrue(e.getMessage().contains("apt-get install libnope7"), e.getMessage());
        var f = lib.function("nope_open", FunctionDescriptor.ofVoid());
        assertFalse(f.isPresent());
        assertThrows(BackendUnavailableException.class, f::handle);
    }

    @Test
    void missingSymbolFailsOnFirstUseNamingFunctionAndLibrary() {
        NativeLibrary libc = NativeLibrary.builder("libc").sonames("libc.so.6").load();
        assertTrue(libc.isAvailable());
        var f = libc.function("rdma4j_no_such_function", FunctionDescriptor.ofVoid());
        var e = assertThrows(Rdma4jException.class, f::handle);
        assertTrue(
                e.getMessage().contains("rdma4j_no_such_function")
                        && e.getMessage().contains("libc.so.6"),
                e.getMessage());
    }

    @Test
    void environmentIsSetInTheProcessBeforeLoading() {
        NativeLibrary.builder("libc")
                .sonames("libc.so.6")
                .environment("RDMA4J_TEST_VAR", "42")
                .load();
        assertEquals("42", Libc.getenv("RDMA4J_TEST_VAR"));
        // a value the user set is kept
        NativeLibrary.builder("libc")
                .sonames("libc.so.6")
                .environment("RDMA4J_TEST_VAR", "43")
                .load();
        assertEquals("42", Libc.getenv("RDMA4J_TEST_VAR"));
    }

    @Test
    void errnoIsCapturedPerCall() throws Throwable {
        NativeLibrary libc = NativeLibrary.builder("libc").sonames("libc.so.6").load();
        // int close(int fd); close(-1) fails with EBADF (9)
        var close =
                libc.function("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Errno.OPTION);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) close.handle().invokeExact(cap, -1);
            assertEquals(-1, rc);
            assertEquals(9, Errno.read(cap));
            assertEquals("Bad file descriptor", Libc.strerror(9));
        }
    }

    @Test
    void callsAFunctionPointerReadFromAnOpsTable() throws Throwable {
        NativeLibrary libc = NativeLibrary.builder("libc").sonames("libc.so.6").load();
        MemorySegment abs = libc.find("abs").orElseThrow();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ops = a.allocate(24, 8);
            ops.set(ValueLayout.ADDRESS, 16, abs);
            var handle = OpsTable.indirect(FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            int r = (int) handle.invokeExact(OpsTable.function(ops, 16, "ops->abs"), -5);
            assertEquals(5, r);
            var e = assertThrows(Rdma4jException.class, () -> OpsTable.function(ops, 8, "ops->missing"));
            assertTrue(e.getMessage().contains("ops->missing"));
        }
    }

    @Test
    void signalGuardPutsBackAReplacedHandler() {
        final int sigxfsz = 25; // guarded, and harmless to flip for a moment
        long before = Libc.signalHandler(sigxfsz);
        SignalGuard.around("test", () -> {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment act = a.allocate(Libc.SIGACTION_SIZE, 8);
                act.set(ValueLayout.JAVA_LONG, 0, before == 1 ? 0L : 1L); // SIG_DFL or SIG_IGN, whichever differs
                Libc.sigactionSet(sigxfsz, act);
            }
            assertNotEquals(before, Libc.signalHandler(sigxfsz));
            return null;
        });
        assertEquals(before, Libc.signalHandler(sigxfsz));
        assertTrue(
                SignalGuard.restored().stream().anyMatch(s -> s.contains("signal 25")),
                SignalGuard.restored().toString());
    }

    @Test
    void jvmOwnsSigsegv() {
        long h = Libc.signalHandler(11);
        assertTrue(h != 0 && h != 1, "the JVM's SIGSEGV handler should be installed, found " + h);
    }

    @Test
    void segmentChecksCatchFreedAndOutOfRange() {
        Arena arena = Arena.ofShared();
        MemorySegment s = arena.allocate(64);
        Segments.checkRange(s, 0, 64, "buffer");
        assertThrows(IndexOutOfBoundsException.class, () -> Segments.checkRange(s, 1, 64, "buffer"));
        assertThrows(IndexOutOfBoundsException.class, () -> Segments.checkRange(s, -1, 1, "buffer"));
        assertThrows(IndexOutOfBoundsException.class, () -> Segments.checkRange(s, Long.MAX_VALUE, 2, "buffer"));
        arena.close();
        var e = assertThrows(IllegalStateException.class, () -> Segments.checkRange(s, 0, 1, "buffer"));
        assertTrue(e.getMessage().contains("freed"));
        assertThrows(
                IllegalArgumentException.class,
                () -> Segments.requireNative(MemorySegment.ofArray(new byte[4]), "heap"));
    }

    @Test
    void nativeErrorMessageNamesFunctionCodeAndText() {
        var e = new io.rdma4j.NativeCallException(
                "ibv_reg_mr", "len=1048576", 12, Libc.strerror(12), "raise ulimit -l");
        assertEquals(
                "ibv_reg_mr(len=1048576) failed: error 12 (Cannot allocate memory). raise ulimit -l", e.getMessage());
    }
}
