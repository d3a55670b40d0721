package io.rdma4j.ibverbs.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.NativeFunction;
import io.rdma4j.ffi.NativeLibrary;
import java.lang.foreign.FunctionDescriptor;

/** librdmacm ({@code librdmacm.so.1}), bound lazily. Its calls return -1 (or NULL) and set errno: all capture it. */
public final class LibRdmacm {
    private LibRdmacm() {}

    public static final NativeLibrary LIB = NativeLibrary.builder("librdmacm")
            .sonames("librdmacm.so.1", "librdmacm.so")
            .installHint("apt-get install librdmacm1 (and modprobe rdma_ucm)")
            .load();

    private static NativeFunction fnErrno(String name, FunctionDescriptor fd) {
        return LIB.function(name, fd, Errno.OPTION);
    }

    /** {@code struct rdma_event_channel *rdma_create_event_channel(void);} */
    public static final NativeFunction rdma_create_event_channel =
            fnErrno("rdma_create_event_channel", FunctionDescriptor.of(ADDRESS));
    /** {@code void rdma_destroy_event_channel(struct rdma_event_channel *channel);} */
    public static final NativeFunction rdma_destroy_event_channel =
            LIB.function("rdma_destroy_event_channel", FunctionDescriptor.ofVoid(ADDRESS));
    /**
     * {@code int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, enum
     * rdma_port_space ps);}
     */
    public static final NativeFunction rdma_create_id =
            fnErrno("rdma_create_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int rdma_destroy_id(struct rdma_cm_id *id);} */
    public static final NativeFunction rdma_destroy_id =
            fnErrno("rdma_destroy_id", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);} */
    public static final NativeFunction rdma_bind_addr =
            fnErrno("rdma_bind_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /**
     * {@code int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, int
     * timeout_ms);}
     */
    public static final NativeFunction rdma_resolve_addr =
            fnErrno("rdma_resolve_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);} */
    public static final NativeFunction rdma_resolve_route =
            fnErrno("rdma_resolve_route", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    /** {@code int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);} */
    public static final NativeFunction rdma_create_qp =
            fnErrno("rdma_create_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /** {@code void rdma_destroy_qp(struct rdma_cm_id *id);} */
    public static final NativeFunction rdma_destroy_qp =
            LIB.function("rdma_destroy_qp", FunctionDescriptor.ofVoid(ADDRESS));
    /** {@code int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);} */
    public static final NativeFunction rdma_connect =
            fnErrno("rdma_connect", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_listen(struct rdma_cm_id *id, int backlog);} */
    public static final NativeFunction rdma_listen =
            fnErrno("rdma_listen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    /** {@code int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param);} */
    public static final NativeFunction rdma_accept =
            fnErrno("rdma_accept", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len);} */
    public static final NativeFunction rdma_reject =
            fnErrno("rdma_reject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
    /** {@code int rdma_disconnect(struct rdma_cm_id *id);} */
    public static final NativeFunction rdma_disconnect =
            fnErrno("rdma_disconnect", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event);} */
    public static final NativeFunction rdma_get_cm_event =
            fnErrno("rdma_get_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_ack_cm_event(struct rdma_cm_event *event);} */
    public static final NativeFunction rdma_ack_cm_event =
            fnErrno("rdma_ack_cm_event", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code const char *rdma_event_str(enum rdma_cm_event_type event);} */
    public static final NativeFunction rdma_event_str =
            LIB.function("rdma_event_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
}
