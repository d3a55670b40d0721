package io.rdma4j.ibverbs.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.NativeFunction;
import io.rdma4j.ffi.NativeLibrary;
import io.rdma4j.ffi.OpsTable;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * libibverbs ({@code libibverbs.so.1}), bound lazily. Functions that return NULL or -1 and set errno take an errno
 * capture segment as their first argument ({@link Errno#OPTION}); those that return the error number do not. The data
 * path ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_poll_cq},
 * {@code ibv_req_notify_cq}) is {@code static inline} in verbs.h: the {@code *_OPS} handles call a function pointer
 * read once from {@code ctx->ops}.
 */
public final class LibIbverbs {
    private LibIbverbs() {}

    public static final NativeLibrary LIB = NativeLibrary.builder("libibverbs")
            .sonames("libibverbs.so.1", "libibverbs.so")
            .installHint(
                    "apt-get install libibverbs1 ibverbs-providers (and load a device driver, e.g. modprobe rdma_rxe)")
            .load();

    private static NativeFunction fn(String name, FunctionDescriptor fd) {
        return LIB.function(name, fd);
    }

    private static NativeFunction fnErrno(String name, FunctionDescriptor fd) {
        return LIB.function(name, fd, Errno.OPTION);
    }

    /** {@code struct ibv_device **ibv_get_device_list(int *num_devices);} NULL + errno on failure. */
    public static final NativeFunction ibv_get_device_list =
            fnErrno("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code void ibv_free_device_list(struct ibv_device **list);} */
    public static final NativeFunction ibv_free_device_list =
            fn("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
    /** {@code const char *ibv_get_device_name(struct ibv_device *device);} */
    public static final NativeFunction ibv_get_device_name =
            fn("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code __be64 ibv_get_device_guid(struct ibv_device *device);} */
    public static final NativeFunction ibv_get_device_guid =
            fn("ibv_get_device_guid", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    /** {@code struct ibv_context *ibv_open_device(struct ibv_device *device);} NULL + errno. */
    public static final NativeFunction ibv_open_device =
            fnErrno("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code int ibv_close_device(struct ibv_context *context);} */
    public static final NativeFunction ibv_close_device =
            fnErrno("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /**
     * {@code int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr);} returns errno.
     */
    public static final NativeFunction ibv_query_device =
            fn("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /**
     * The exported compat {@code int ibv_query_port(ctx, uint8_t port_num, struct _compat_ibv_port_attr *)}, used when
     * verbs_context lacks query_port.
     */
    public static final NativeFunction ibv_query_port =
            fn("ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
    /**
     * {@code int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);} -1 +
     * errno.
     */
    public static final NativeFunction ibv_query_gid =
            fnErrno("ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));
    /**
     * {@code ssize_t _ibv_query_gid_table(ctx, struct ibv_gid_entry *entries, size_t max_entries, uint32_t flags,
     * size_t entry_size);} negative errno.
     */
    public static final NativeFunction _ibv_query_gid_table = fn(
            "_ibv_query_gid_table", FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG));
    /** {@code struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);} NULL + errno. */
    public static final NativeFunction ibv_alloc_pd = fnErrno("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code int ibv_dealloc_pd(struct ibv_pd *pd);} returns errno. */
    public static final NativeFunction ibv_dealloc_pd = fn("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /**
     * {@code struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int
     * access);} NULL + errno.
     */
    public static final NativeFunction ibv_reg_mr_iova2 = fnErrno(
            "ibv_reg_mr_iova2", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT));
    /**
     * {@code struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
     * int access);} NULL + errno.
     */
    public static final NativeFunction ibv_reg_dmabuf_mr = fnErrno(
            "ibv_reg_dmabuf_mr",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));
    /** {@code int ibv_dereg_mr(struct ibv_mr *mr);} returns errno. */
    public static final NativeFunction ibv_dereg_mr = fn("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);} NULL + errno. */
    public static final NativeFunction ibv_create_comp_channel =
            fnErrno("ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /**
     * {@code int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);} returns errno (EBUSY while CQs use it).
     */
    public static final NativeFunction ibv_destroy_comp_channel =
            fn("ibv_destroy_comp_channel", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /**
     * {@code struct ibv_cq *ibv_create_cq(ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel, int
     * comp_vector);} NULL + errno.
     */
    public static final NativeFunction ibv_create_cq =
            fnErrno("ibv_create_cq", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int ibv_destroy_cq(struct ibv_cq *cq);} returns errno. */
    public static final NativeFunction ibv_destroy_cq = fn("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /**
     * {@code int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);} -1 +
     * errno.
     */
    public static final NativeFunction ibv_get_cq_event =
            fnErrno("ibv_get_cq_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /** {@code void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);} */
    public static final NativeFunction ibv_ack_cq_events =
            fn("ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
    /** {@code struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);} NULL + errno. */
    public static final NativeFunction ibv_create_qp =
            fnErrno("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    /** {@code int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);} returns errno. */
    public static final NativeFunction ibv_modify_qp =
            fn("ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /**
     * {@code int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr
     * *init_attr);} returns errno.
     */
    public static final NativeFunction ibv_query_qp =
            fn("ibv_query_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
    /** {@code int ibv_destroy_qp(struct ibv_qp *qp);} returns errno. */
    public static final NativeFunction ibv_destroy_qp = fn("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /**
     * {@code struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);} NULL + errno.
     */
    public static final NativeFunction ibv_create_srq =
            fnErrno("ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    /** {@code int ibv_destroy_srq(struct ibv_srq *srq);} returns errno. */
    public static final NativeFunction ibv_destroy_srq =
            fn("ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);} NULL + errno. */
    public static final NativeFunction ibv_create_ah =
            fnErrno("ibv_create_ah", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    /** {@code int ibv_destroy_ah(struct ibv_ah *ah);} returns errno. */
    public static final NativeFunction ibv_destroy_ah = fn("ibv_destroy_ah", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event);} -1 + errno. */
    public static final NativeFunction ibv_get_async_event =
            fnErrno("ibv_get_async_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code void ibv_ack_async_event(struct ibv_async_event *event);} */
    public static final NativeFunction ibv_ack_async_event =
            fn("ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS));
    /** {@code const char *ibv_wc_status_str(enum ibv_wc_status status);} */
    public static final NativeFunction ibv_wc_status_str =
            fn("ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    /**
     * {@code int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);} called through
     * {@code cq->context->ops.poll_cq}.
     */
    public static final MethodHandle POLL_CQ_OP =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    /** {@code int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);} */
    public static final MethodHandle REQ_NOTIFY_CQ_OP =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    /**
     * {@code int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);} and post_recv,
     * post_srq_recv.
     */
    public static final MethodHandle POST_OP =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /**
     * {@code int (*query_port)(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr, size_t
     * port_attr_len);} in verbs_context.
     */
    public static final MethodHandle QUERY_PORT_OP =
            OpsTable.indirect(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, JAVA_LONG));
}
