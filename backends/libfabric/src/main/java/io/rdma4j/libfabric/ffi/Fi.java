package io.rdma4j.libfabric.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdma4j.ffi.NativeFunction;
import io.rdma4j.ffi.NativeLibrary;
import io.rdma4j.ffi.OpsTable;
import io.rdma4j.ffi.Structs;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * libfabric itself: the library ({@code libfabric.so.1}), its exported functions, and one downcall handle per ops-table
 * signature for the {@code static inline} calls.
 *
 * <p>ABI note: the ops-table handles take every pointer ({@code struct fid_ep *}, buffers, descriptors, the context) as
 * a {@code long}. On LP64 Linux (x86-64 System V and AArch64 AAPCS64) a pointer and a 64-bit integer are passed in the
 * same integer register, so this is the same call; it lets the data path pass addresses without creating a
 * {@code MemorySegment} per operation.
 */
public final class Fi {
    private Fi() {}

    /**
     * The library. Debian's libfabric loads libinfinipath (psm provider), whose constructor replaces the JVM's SIGSEGV
     * handler unless {@code IPATH_NO_BACKTRACE} is set: it is set in the process environment before loading.
     */
    public static final NativeLibrary LIB = NativeLibrary.builder("libfabric")
            .sonames("libfabric.so.1")
            .installHint("apt-get install libfabric1")
            .environment("IPATH_NO_BACKTRACE", "1")
            .load();

    /**
     * All of the address space, for reading native structs at raw addresses without a segment per read. Only addresses
     * libfabric handed us (its structs and ops tables) are read through it.
     */
    @SuppressWarnings(
            "restricted") // this library runs with --enable-native-access; reading provider structs is its job
    public static final MemorySegment MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    /** {@code uint32_t fi_version(void);} */
    public static final NativeFunction FI_VERSION = LIB.function("fi_version", FunctionDescriptor.of(JAVA_INT));
    /**
     * {@code int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags, const struct
     * fi_info *hints, struct fi_info **info);}
     */
    public static final NativeFunction FI_GETINFO = LIB.function(
            "fi_getinfo", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS));
    /** {@code void fi_freeinfo(struct fi_info *info);} */
    public static final NativeFunction FI_FREEINFO = LIB.function("fi_freeinfo", FunctionDescriptor.ofVoid(JAVA_LONG));
    /** {@code struct fi_info *fi_dupinfo(const struct fi_info *info);} */
    public static final NativeFunction FI_DUPINFO =
            LIB.function("fi_dupinfo", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
    /** {@code int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);} */
    public static final NativeFunction FI_FABRIC =
            LIB.function("fi_fabric", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG));
    /** {@code const char *fi_strerror(int errnum);} */
    public static final NativeFunction FI_STRERROR =
            LIB.function("fi_strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    // ---- ops-table signatures; the first argument of each handle is the function pointer ----

    /** {@code int (*close)(struct fid *fid);} */
    public static final MethodHandle CLOSE = OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    /** {@code int (*bind)(struct fid *fid, struct fid *bfid, uint64_t flags);} */
    public static final MethodHandle BIND =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /** {@code int (*trywait)(struct fid_fabric *fabric, struct fid **fids, int count);} */
    public static final MethodHandle TRYWAIT =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    /** {@code int (*control)(struct fid *fid, int command, void *arg);} */
    public static final MethodHandle CONTROL =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG));
    /**
     * {@code int (*domain)(struct fid_fabric *, struct fi_info *, struct fid_domain **, void *context);} and {@code int
     * (*endpoint)(struct fid_domain *, struct fi_info *, struct fid_ep **, void *context);}
     */
    public static final MethodHandle OPEN_WITH_INFO =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG));
    /**
     * {@code int (*av_open)(struct fid_domain *, struct fi_av_attr *, struct fid_av **, void *context);} and {@code int
     * (*cq_open)(struct fid_domain *, struct fi_cq_attr *, struct fid_cq **, void *context);}
     */
    public static final MethodHandle OPEN_WITH_ATTR =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG));
    /**
     * {@code int (*reg)(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset, uint64_t
     * requested_key, uint64_t flags, struct fid_mr **mr, void *context);}
     */
    public static final MethodHandle MR_REG = OpsTable.indirect(FunctionDescriptor.of(
            JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG));
    /** {@code int (*regattr)(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr);} */
    public static final MethodHandle MR_REGATTR =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
    /**
     * {@code int (*insert)(struct fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags, void
     * *context);}
     */
    public static final MethodHandle AV_INSERT = OpsTable.indirect(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG));
    /** {@code int (*getname)(fid_t fid, void *addr, size_t *addrlen);} */
    public static final MethodHandle CM_GETNAME =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS));
    /** {@code ssize_t (*readerr)(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags);} */
    public static final MethodHandle CQ_READERR =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG));
    /**
     * {@code const char *(*strerror)(struct fid_cq *cq, int prov_errno, const void *err_data, char *buf, size_t len);}
     */
    public static final MethodHandle CQ_STRERROR =
            OpsTable.indirect(FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG));

    // data path: every pointer is a long (see the class comment), nothing is allocated per call

    /** {@code ssize_t (*read)(struct fid_cq *cq, void *buf, size_t count);} */
    public static final MethodHandle CQ_READ =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /**
     * {@code ssize_t (*read)(struct fid_ep *, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr,
     * uint64_t key, void *context);} and {@code (*write)} with the same parameters.
     */
    public static final MethodHandle RMA = OpsTable.indirect(FunctionDescriptor.of(
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /**
     * {@code ssize_t (*writedata)(struct fid_ep *, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t
     * dest_addr, uint64_t addr, uint64_t key, void *context);}
     */
    public static final MethodHandle RMA_WRITEDATA = OpsTable.indirect(FunctionDescriptor.of(
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG));
    /** {@code ssize_t (*writemsg)(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags);} */
    public static final MethodHandle RMA_MSG =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /**
     * {@code ssize_t (*inject)(struct fid_ep *, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr,
     * uint64_t key);}
     */
    public static final MethodHandle RMA_INJECT = OpsTable.indirect(
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /**
     * {@code ssize_t (*send)(struct fid_ep *, const void *buf, size_t len, void *desc, fi_addr_t dest_addr, void
     * *context);} and {@code (*recv)} with the same parameters.
     */
    public static final MethodHandle MSG = OpsTable.indirect(
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    /** {@code ssize_t (*inject)(struct fid_ep *, const void *buf, size_t len, fi_addr_t dest_addr);} */
    public static final MethodHandle MSG_INJECT =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));

    /** Reads a {@code uint64_t}/{@code size_t} at a native address. */
    public static long getLong(long address) {
        return MEMORY.get(ValueLayout.JAVA_LONG_UNALIGNED, address);
    }

    public static int getInt(long address) {
        return MEMORY.get(ValueLayout.JAVA_INT_UNALIGNED, address);
    }

    /** Reads the C string whose pointer is stored at {@code address}. */
    public static String getString(long address) {
        long p = getLong(address);
        return p == 0 ? null : Structs.string(MemorySegment.ofAddress(p));
    }

    /** The function pointer at {@code offset} in the ops table whose pointer is stored at {@code opsPointerAddress}. */
    public static MemorySegment op(long opsPointerAddress, long offset, String cName) {
        return OpsTable.function(MemorySegment.ofAddress(getLong(opsPointerAddress)), offset, cName);
    }

    /** {@code fi_version()} of the loaded library. */
    public static int version() {
        try {
            return (int) FI_VERSION.handle().invokeExact();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** {@code fi_strerror(errnum)}; {@code errnum} positive. */
    public static String strerror(int errnum) {
        try {
            MemorySegment p = (MemorySegment) FI_STRERROR.handle().invokeExact(errnum);
            String s = Structs.string(p);
            return s == null ? "unknown error" : s;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
