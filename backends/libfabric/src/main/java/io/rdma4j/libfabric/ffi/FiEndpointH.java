package io.rdma4j.libfabric.ffi;

import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.SIZE_T;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.offset;
import static io.rdma4j.ffi.Structs.struct;

import java.lang.foreign.StructLayout;

/** {@code <rdma/fi_endpoint.h>}, {@code <rdma/fi_cm.h>}, {@code <rdma/fi_rma.h>}: the endpoint and its ops tables. */
public final class FiEndpointH {
    private FiEndpointH() {}

    /**
     *
     *
     * <pre>
     * struct fid_ep {
     *     struct fid fid; struct fi_ops_ep *ops; struct fi_ops_cm *cm; struct fi_ops_msg *msg; struct fi_ops_rma *rma;
     *     struct fi_ops_tagged *tagged; struct fi_ops_atomic *atomic; struct fi_ops_collective *collective;
     * };</pre>
     */
    public static final StructLayout FID_EP = struct(
            "fid_ep",
            FabricH.FID.withName("fid"),
            POINTER.withName("ops"),
            POINTER.withName("cm"),
            POINTER.withName("msg"),
            POINTER.withName("rma"),
            POINTER.withName("tagged"),
            POINTER.withName("atomic"),
            POINTER.withName("collective"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_msg {
     *     size_t size;
     *     ssize_t (*recv)(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, void *context);
     *     ssize_t (*recvv)(...); ssize_t (*recvmsg)(...);
     *     ssize_t (*send)(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr,
     *                     void *context);
     *     ssize_t (*sendv)(...); ssize_t (*sendmsg)(...);
     *     ssize_t (*inject)(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr);
     *     ssize_t (*senddata)(...); ssize_t (*injectdata)(...);
     * };</pre>
     */
    public static final StructLayout FI_OPS_MSG = struct(
            "fi_ops_msg",
            SIZE_T.withName("size"),
            POINTER.withName("recv"),
            POINTER.withName("recvv"),
            POINTER.withName("recvmsg"),
            POINTER.withName("send"),
            POINTER.withName("sendv"),
            POINTER.withName("sendmsg"),
            POINTER.withName("inject"),
            POINTER.withName("senddata"),
            POINTER.withName("injectdata"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_rma {
     *     size_t size;
     *     ssize_t (*read)(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src_addr, uint64_t addr,
     *                     uint64_t key, void *context);
     *     ssize_t (*readv)(...); ssize_t (*readmsg)(...);
     *     ssize_t (*write)(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest_addr,
     *                      uint64_t addr, uint64_t key, void *context);
     *     ssize_t (*writev)(...); ssize_t (*writemsg)(...);
     *     ssize_t (*inject)(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest_addr, uint64_t addr,
     *                       uint64_t key);
     *     ssize_t (*writedata)(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
     *                          fi_addr_t dest_addr, uint64_t addr, uint64_t key, void *context);
     *     ssize_t (*injectdata)(...);
     * };</pre>
     */
    public static final StructLayout FI_OPS_RMA = struct(
            "fi_ops_rma",
            SIZE_T.withName("size"),
            POINTER.withName("read"),
            POINTER.withName("readv"),
            POINTER.withName("readmsg"),
            POINTER.withName("write"),
            POINTER.withName("writev"),
            POINTER.withName("writemsg"),
            POINTER.withName("inject"),
            POINTER.withName("writedata"),
            POINTER.withName("injectdata"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_cm {
     *     size_t size;
     *     int (*setname)(fid_t fid, void *addr, size_t addrlen);
     *     int (*getname)(fid_t fid, void *addr, size_t *addrlen);
     *     int (*getpeer)(...); int (*connect)(...); int (*listen)(...); int (*accept)(...); int (*reject)(...);
     *     int (*shutdown)(...); int (*join)(...);
     * };</pre>
     */
    public static final StructLayout FI_OPS_CM = struct(
            "fi_ops_cm",
            SIZE_T.withName("size"),
            POINTER.withName("setname"),
            POINTER.withName("getname"),
            POINTER.withName("getpeer"),
            POINTER.withName("connect"),
            POINTER.withName("listen"),
            POINTER.withName("accept"),
            POINTER.withName("reject"),
            POINTER.withName("shutdown"),
            POINTER.withName("join"));

    /**
     *
     *
     * <pre>
     * struct fi_rma_iov { uint64_t addr; size_t len; uint64_t key; };</pre>
     */
    public static final StructLayout FI_RMA_IOV =
            struct("fi_rma_iov", U64.withName("addr"), SIZE_T.withName("len"), U64.withName("key"));

    /**
     *
     *
     * <pre>
     * struct fi_msg_rma {
     *     const struct iovec *msg_iov; void **desc; size_t iov_count; fi_addr_t addr;
     *     const struct fi_rma_iov *rma_iov; size_t rma_iov_count; void *context; uint64_t data;
     * };</pre>
     */
    public static final StructLayout FI_MSG_RMA = struct(
            "fi_msg_rma",
            POINTER.withName("msg_iov"),
            POINTER.withName("desc"),
            SIZE_T.withName("iov_count"),
            U64.withName("addr"),
            POINTER.withName("rma_iov"),
            SIZE_T.withName("rma_iov_count"),
            POINTER.withName("context"),
            U64.withName("data"));

    public static final long EP_CM = offset(FID_EP, "cm");
    public static final long EP_MSG = offset(FID_EP, "msg");
    public static final long EP_RMA = offset(FID_EP, "rma");
    public static final long OPS_MSG_RECV = offset(FI_OPS_MSG, "recv");
    public static final long OPS_MSG_SEND = offset(FI_OPS_MSG, "send");
    public static final long OPS_MSG_INJECT = offset(FI_OPS_MSG, "inject");
    public static final long OPS_RMA_READ = offset(FI_OPS_RMA, "read");
    public static final long OPS_RMA_WRITE = offset(FI_OPS_RMA, "write");
    public static final long OPS_RMA_WRITEMSG = offset(FI_OPS_RMA, "writemsg");
    public static final long OPS_RMA_INJECT = offset(FI_OPS_RMA, "inject");
    public static final long OPS_RMA_WRITEDATA = offset(FI_OPS_RMA, "writedata");
    public static final long OPS_CM_GETNAME = offset(FI_OPS_CM, "getname");
    public static final long RMA_IOV_ADDR = offset(FI_RMA_IOV, "addr");
    public static final long RMA_IOV_LEN = offset(FI_RMA_IOV, "len");
    public static final long RMA_IOV_KEY = offset(FI_RMA_IOV, "key");
    public static final long MSG_RMA_MSG_IOV = offset(FI_MSG_RMA, "msg_iov");
    public static final long MSG_RMA_DESC = offset(FI_MSG_RMA, "desc");
    public static final long MSG_RMA_IOV_COUNT = offset(FI_MSG_RMA, "iov_count");
    public static final long MSG_RMA_ADDR = offset(FI_MSG_RMA, "addr");
    public static final long MSG_RMA_RMA_IOV = offset(FI_MSG_RMA, "rma_iov");
    public static final long MSG_RMA_RMA_IOV_COUNT = offset(FI_MSG_RMA, "rma_iov_count");
    public static final long MSG_RMA_CONTEXT = offset(FI_MSG_RMA, "context");
    public static final long MSG_RMA_DATA = offset(FI_MSG_RMA, "data");
}
