package io.rdma4j.ffi;

import static io.rdma4j.ffi.Structs.INT;
import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.U16;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.U8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class StructsTest {
    /** {@code struct timespec { time_t tv_sec; long tv_nsec; };} */
    static final StructLayout TIMESPEC = Structs.struct(
            "timespec", ValueLayout.JAVA_LONG.withName("tv_sec"), ValueLayout.JAVA_LONG.withName("tv_nsec"));
    /**
     * {@code struct sockaddr_in6 { sa_family_t sin6_family; in_port_t sin6_port; uint32_t sin6_flowinfo; struct
     * in6_addr sin6_addr; uint32_t sin6_scope_id; };}
     */
    static final StructLayout SOCKADDR_IN6 = Structs.struct(
            "sockaddr_in6",
            U16.withName("sin6_family"),
            U16.withName("sin6_port"),
            INT.withName("sin6_flowinfo"),
            Structs.array("sin6_addr", 16, U8),
            INT.withName("sin6_scope_id"));
    /** {@code struct iovec { void *iov_base; size_t iov_len; };} */
    static final StructLayout IOVEC = Structs.struct("iovec", POINTER.withName("iov_base"), U64.withName("iov_len"));
    /** A made-up struct that needs inner and tail padding, checked against gcc through a local typedef. */
    static final StructLayout PADDED = Structs.struct(
            "padded",
            U8.withName("a"),
            U64.withName("b"),
            U16.withName("c"),
            Structs.union(null, INT.withName("u_int"), U8.withName("u_byte")),
            U8.withName("d"));

    @Test
    void insertsPaddingLikeGcc() {
        assertEquals(8, Structs.offset(PADDED, "b"));
        assertEquals(16, Structs.offset(PADDED, "c"));
        assertEquals(20, Structs.offset(PADDED, "u_int"));
        assertEquals(20, Structs.offset(PADDED, "u_byte"));
        assertEquals(24, Structs.offset(PADDED, "d"));
        assertEquals(32, PADDED.byteSize());
    }

    @Test
    void rejectsUnknownMember() {
        var e = assertThrows(IllegalArgumentException.class, () -> Structs.offset(IOVEC, "iov_nope"));
        assertTrue(e.getMessage().contains("iov_nope"), e.getMessage());
    }

    @Test
    void unionIsPaddedToItsAlignment() {
        MemoryLayout u = Structs.union("u", U64.withName("x"), Structs.array("bytes", 9, U8));
        assertEquals(16, u.byteSize());
    }

    @Test
    void layoutsMatchGccForSystemHeaders() throws Exception {
        var mismatches = new CLayoutCheck()
                .include("time.h")
                .include("errno.h")
                .include("sys/uio.h")
                .include("netinet/in.h")
                .include("stdint.h")
                .struct("struct timespec", TIMESPEC)
                .struct("struct iovec", IOVEC)
                .struct("struct sockaddr_in6", SOCKADDR_IN6)
                .constant("EINVAL", 22)
                .run();
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches));
    }

    @Test
    void checkerReportsAWrongOffset() throws Exception {
        StructLayout wrong = Structs.struct("iovec", U64.withName("iov_len"), POINTER.withName("iov_base"));
        var mismatches = new CLayoutCheck()
                .include("sys/uio.h")
                .struct("struct iovec", wrong)
                .run();
        assertEquals(2, mismatches.size(), String.join("\n", mismatches));
    }
}
