package io.rdma4j.libfabric.ffi;

import static io.rdma4j.ffi.Structs.INT;
import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.SIZE_T;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.offset;
import static io.rdma4j.ffi.Structs.struct;

import java.lang.foreign.StructLayout;

/** {@code <rdma/fi_eq.h>}: completion queue attributes, entries and ops. */
public final class FiEqH {
    private FiEqH() {}

    // enum fi_cq_format
    public static final int FI_CQ_FORMAT_UNSPEC = 0;
    public static final int FI_CQ_FORMAT_CONTEXT = 1;
    public static final int FI_CQ_FORMAT_MSG = 2;
    public static final int FI_CQ_FORMAT_DATA = 3;
    // enum fi_wait_obj
    public static final int FI_WAIT_NONE = 0;
    public static final int FI_WAIT_UNSPEC = 1;
    public static final int FI_WAIT_FD = 3;

    /**
     *
     *
     * <pre>
     * struct fi_cq_attr {
     *     size_t size; uint64_t flags; enum fi_cq_format format; enum fi_wait_obj wait_obj; int signaling_vector;
     *     enum fi_cq_wait_cond wait_cond; struct fid_wait *wait_set;
     * };</pre>
     */
    public static final StructLayout FI_CQ_ATTR = struct(
            "fi_cq_attr",
            SIZE_T.withName("size"),
            U64.withName("flags"),
            INT.withName("format"),
            INT.withName("wait_obj"),
            INT.withName("signaling_vector"),
            INT.withName("wait_cond"),
            POINTER.withName("wait_set"));

    /** {@code struct fi_cq_data_entry { void *op_context; uint64_t flags; size_t len; void *buf; uint64_t data; };} */
    public static final StructLayout FI_CQ_DATA_ENTRY = struct(
            "fi_cq_data_entry",
            POINTER.withName("op_context"),
            U64.withName("flags"),
            SIZE_T.withName("len"),
            POINTER.withName("buf"),
            U64.withName("data"));

    /**
     *
     *
     * <pre>
     * struct fi_cq_err_entry {
     *     void *op_context; uint64_t flags; size_t len; void *buf; uint64_t data; uint64_t tag; size_t olen;
     *     int err; int prov_errno; void *err_data; size_t err_data_size;
     * };</pre>
     */
    public static final StructLayout FI_CQ_ERR_ENTRY = struct(
            "fi_cq_err_entry",
            POINTER.withName("op_context"),
            U64.withName("flags"),
            SIZE_T.withName("len"),
            POINTER.withName("buf"),
            U64.withName("data"),
            U64.withName("tag"),
            SIZE_T.withName("olen"),
            INT.withName("err"),
            INT.withName("prov_errno"),
            POINTER.withName("err_data"),
            SIZE_T.withName("err_data_size"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_cq {
     *     size_t size;
     *     ssize_t (*read)(struct fid_cq *cq, void *buf, size_t count);
     *     ssize_t (*readfrom)(...);
     *     ssize_t (*readerr)(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags);
     *     ssize_t (*sread)(...); ssize_t (*sreadfrom)(...); int (*signal)(struct fid_cq *cq);
     *     const char *(*strerror)(struct fid_cq *cq, int prov_errno, const void *err_data, char *buf, size_t len);
     * };</pre>
     */
    public static final StructLayout FI_OPS_CQ = struct(
            "fi_ops_cq",
            SIZE_T.withName("size"),
            POINTER.withName("read"),
            POINTER.withName("readfrom"),
            POINTER.withName("readerr"),
            POINTER.withName("sread"),
            POINTER.withName("sreadfrom"),
            POINTER.withName("signal"),
            POINTER.withName("strerror"));

    /** {@code struct fid_cq { struct fid fid; struct fi_ops_cq *ops; };} */
    public static final StructLayout FID_CQ = struct("fid_cq", FabricH.FID.withName("fid"), POINTER.withName("ops"));

    public static final long CQ_ATTR_SIZE = offset(FI_CQ_ATTR, "size");
    public static final long CQ_ATTR_FORMAT = offset(FI_CQ_ATTR, "format");
    public static final long CQ_ATTR_WAIT_OBJ = offset(FI_CQ_ATTR, "wait_obj");
    public static final long ENTRY_OP_CONTEXT = offset(FI_CQ_DATA_ENTRY, "op_context");
    public static final long ENTRY_FLAGS = offset(FI_CQ_DATA_ENTRY, "flags");
    public static final long ENTRY_LEN = offset(FI_CQ_DATA_ENTRY, "len");
    public static final long ENTRY_BUF = offset(FI_CQ_DATA_ENTRY, "buf");
    public static final long ENTRY_DATA = offset(FI_CQ_DATA_ENTRY, "data");
    public static final long ERR_OP_CONTEXT = offset(FI_CQ_ERR_ENTRY, "op_context");
    public static final long ERR_FLAGS = offset(FI_CQ_ERR_ENTRY, "flags");
    public static final long ERR_LEN = offset(FI_CQ_ERR_ENTRY, "len");
    public static final long ERR_DATA = offset(FI_CQ_ERR_ENTRY, "data");
    public static final long ERR_ERR = offset(FI_CQ_ERR_ENTRY, "err");
    public static final long ERR_PROV_ERRNO = offset(FI_CQ_ERR_ENTRY, "prov_errno");
    public static final long ERR_ERR_DATA = offset(FI_CQ_ERR_ENTRY, "err_data");
    public static final long ERR_ERR_DATA_SIZE = offset(FI_CQ_ERR_ENTRY, "err_data_size");
    public static final long CQ_OPS = offset(FID_CQ, "ops");
    public static final long OPS_CQ_READ = offset(FI_OPS_CQ, "read");
    public static final long OPS_CQ_READERR = offset(FI_OPS_CQ, "readerr");
    public static final long OPS_CQ_STRERROR = offset(FI_OPS_CQ, "strerror");
}
