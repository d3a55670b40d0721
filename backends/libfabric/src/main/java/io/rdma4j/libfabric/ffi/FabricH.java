package io.rdma4j.libfabric.ffi;

import static io.rdma4j.ffi.Structs.INT;
import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.SIZE_T;
import static io.rdma4j.ffi.Structs.U32;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.offset;
import static io.rdma4j.ffi.Structs.struct;

import java.lang.foreign.StructLayout;

/**
 * {@code <rdma/fabric.h>}: fi_info and its attribute structs, fid, the fabric ops, and the capability/mode constants.
 */
public final class FabricH {
    private FabricH() {}

    /** {@code FI_VERSION(1, 17)}: the API version these bindings are written against. */
    public static final int FI_VERSION_1_17 = version(1, 17);

    /** {@code #define FI_VERSION(major, minor) (((major) << 16) | (minor))} */
    public static int version(int major, int minor) {
        return (major << 16) | minor;
    }

    // capabilities and operation flags
    public static final long FI_MSG = 1L << 1;
    public static final long FI_RMA = 1L << 2;
    public static final long FI_TAGGED = 1L << 3;
    public static final long FI_ATOMIC = 1L << 4;
    public static final long FI_READ = 1L << 8;
    public static final long FI_WRITE = 1L << 9;
    public static final long FI_RECV = 1L << 10;
    public static final long FI_SEND = 1L << 11;
    public static final long FI_TRANSMIT = FI_SEND;
    public static final long FI_REMOTE_READ = 1L << 12;
    public static final long FI_REMOTE_WRITE = 1L << 13;
    public static final long FI_MULTI_RECV = 1L << 16;
    public static final long FI_REMOTE_CQ_DATA = 1L << 17;
    public static final long FI_COMPLETION = 1L << 24;
    public static final long FI_INJECT = 1L << 25;
    public static final long FI_DELIVERY_COMPLETE = 1L << 28;
    public static final long FI_HMEM = 1L << 47;
    public static final long FI_LOCAL_COMM = 1L << 51;
    public static final long FI_REMOTE_COMM = 1L << 52;
    public static final long FI_SOURCE = 1L << 57;

    // mode bits
    public static final long FI_CONTEXT = 1L << 59;
    public static final long FI_RX_CQ_DATA = 1L << 56;
    public static final long FI_CONTEXT2 = 1L << 52;

    /** {@code #define FI_ADDR_UNSPEC ((uint64_t) -1)} */
    public static final long FI_ADDR_UNSPEC = -1L;

    // enum { FI_FORMAT_UNSPEC, FI_SOCKADDR, FI_SOCKADDR_IN, FI_SOCKADDR_IN6, FI_SOCKADDR_IB, ... FI_ADDR_STR = 9 ... }
    public static final int FI_FORMAT_UNSPEC = 0;
    public static final int FI_SOCKADDR = 1;
    public static final int FI_SOCKADDR_IN = 2;
    public static final int FI_SOCKADDR_IN6 = 3;
    public static final int FI_SOCKADDR_IB = 4;
    public static final int FI_ADDR_STR = 9;
    public static final int FI_ADDR_EFA = 12;

    // enum fi_av_type
    public static final int FI_AV_UNSPEC = 0;
    public static final int FI_AV_MAP = 1;
    public static final int FI_AV_TABLE = 2;

    // mr_mode bits
    public static final int FI_MR_UNSPEC = 0;
    public static final int FI_MR_BASIC = 1;
    public static final int FI_MR_SCALABLE = 2;
    public static final int FI_MR_LOCAL = 1 << 2;
    public static final int FI_MR_RAW = 1 << 3;
    public static final int FI_MR_VIRT_ADDR = 1 << 4;
    public static final int FI_MR_ALLOCATED = 1 << 5;
    public static final int FI_MR_PROV_KEY = 1 << 6;
    public static final int FI_MR_MMU_NOTIFY = 1 << 7;
    public static final int FI_MR_RMA_EVENT = 1 << 8;
    public static final int FI_MR_ENDPOINT = 1 << 9;
    public static final int FI_MR_HMEM = 1 << 10;
    public static final int FI_MR_COLLECTIVE = 1 << 11;

    // enum fi_progress
    public static final int FI_PROGRESS_UNSPEC = 0;
    public static final int FI_PROGRESS_AUTO = 1;
    public static final int FI_PROGRESS_MANUAL = 2;

    // enum fi_ep_type
    public static final int FI_EP_UNSPEC = 0;
    public static final int FI_EP_MSG = 1;
    public static final int FI_EP_DGRAM = 2;
    public static final int FI_EP_RDM = 3;

    // enum { FI_CLASS_... } (the ones this binding opens)
    public static final int FI_CLASS_FABRIC = 1;
    public static final int FI_CLASS_DOMAIN = 2;
    public static final int FI_CLASS_EP = 3;
    public static final int FI_CLASS_AV = 11;
    public static final int FI_CLASS_MR = 12;
    public static final int FI_CLASS_CQ = 14;

    // control commands
    public static final int FI_GETWAIT = 5;
    public static final int FI_ENABLE = 6;

    /**
     *
     *
     * <pre>
     * struct fi_tx_attr {
     *     uint64_t caps; uint64_t mode; uint64_t op_flags; uint64_t msg_order; uint64_t comp_order;
     *     size_t inject_size; size_t size; size_t iov_limit; size_t rma_iov_limit; uint32_t tclass;
     * };</pre>
     */
    public static final StructLayout FI_TX_ATTR = struct(
            "fi_tx_attr",
            U64.withName("caps"),
            U64.withName("mode"),
            U64.withName("op_flags"),
            U64.withName("msg_order"),
            U64.withName("comp_order"),
            SIZE_T.withName("inject_size"),
            SIZE_T.withName("size"),
            SIZE_T.withName("iov_limit"),
            SIZE_T.withName("rma_iov_limit"),
            U32.withName("tclass"));

    /**
     *
     *
     * <pre>
     * struct fi_rx_attr {
     *     uint64_t caps; uint64_t mode; uint64_t op_flags; uint64_t msg_order; uint64_t comp_order;
     *     size_t total_buffered_recv; size_t size; size_t iov_limit;
     * };</pre>
     */
    public static final StructLayout FI_RX_ATTR = struct(
            "fi_rx_attr",
            U64.withName("caps"),
            U64.withName("mode"),
            U64.withName("op_flags"),
            U64.withName("msg_order"),
            U64.withName("comp_order"),
            SIZE_T.withName("total_buffered_recv"),
            SIZE_T.withName("size"),
            SIZE_T.withName("iov_limit"));

    /**
     *
     *
     * <pre>
     * struct fi_ep_attr {
     *     enum fi_ep_type type; uint32_t protocol; uint32_t protocol_version; size_t max_msg_size;
     *     size_t msg_prefix_size; size_t max_order_raw_size; size_t max_order_war_size; size_t max_order_waw_size;
     *     uint64_t mem_tag_format; size_t tx_ctx_cnt; size_t rx_ctx_cnt; size_t auth_key_size; uint8_t *auth_key;
     * };</pre>
     */
    public static final StructLayout FI_EP_ATTR = struct(
            "fi_ep_attr",
            INT.withName("type"),
            U32.withName("protocol"),
            U32.withName("protocol_version"),
            SIZE_T.withName("max_msg_size"),
            SIZE_T.withName("msg_prefix_size"),
            SIZE_T.withName("max_order_raw_size"),
            SIZE_T.withName("max_order_war_size"),
            SIZE_T.withName("max_order_waw_size"),
            U64.withName("mem_tag_format"),
            SIZE_T.withName("tx_ctx_cnt"),
            SIZE_T.withName("rx_ctx_cnt"),
            SIZE_T.withName("auth_key_size"),
            POINTER.withName("auth_key"));

    /**
     *
     *
     * <pre>
     * struct fi_domain_attr {
     *     struct fid_domain *domain; char *name; enum fi_threading threading; enum fi_progress control_progress;
     *     enum fi_progress data_progress; enum fi_resource_mgmt resource_mgmt; enum fi_av_type av_type; int mr_mode;
     *     size_t mr_key_size; size_t cq_data_size; size_t cq_cnt; size_t ep_cnt; size_t tx_ctx_cnt; size_t rx_ctx_cnt;
     *     size_t max_ep_tx_ctx; size_t max_ep_rx_ctx; size_t max_ep_stx_ctx; size_t max_ep_srx_ctx; size_t cntr_cnt;
     *     size_t mr_iov_limit; uint64_t caps; uint64_t mode; uint8_t *auth_key; size_t auth_key_size;
     *     size_t max_err_data; size_t mr_cnt; uint32_t tclass;
     * };</pre>
     */
    public static final StructLayout FI_DOMAIN_ATTR = struct(
            "fi_domain_attr",
            POINTER.withName("domain"),
            POINTER.withName("name"),
            INT.withName("threading"),
            INT.withName("control_progress"),
            INT.withName("data_progress"),
            INT.withName("resource_mgmt"),
            INT.withName("av_type"),
            INT.withName("mr_mode"),
            SIZE_T.withName("mr_key_size"),
            SIZE_T.withName("cq_data_size"),
            SIZE_T.withName("cq_cnt"),
            SIZE_T.withName("ep_cnt"),
            SIZE_T.withName("tx_ctx_cnt"),
            SIZE_T.withName("rx_ctx_cnt"),
            SIZE_T.withName("max_ep_tx_ctx"),
            SIZE_T.withName("max_ep_rx_ctx"),
            SIZE_T.withName("max_ep_stx_ctx"),
            SIZE_T.withName("max_ep_srx_ctx"),
            SIZE_T.withName("cntr_cnt"),
            SIZE_T.withName("mr_iov_limit"),
            U64.withName("caps"),
            U64.withName("mode"),
            POINTER.withName("auth_key"),
            SIZE_T.withName("auth_key_size"),
            SIZE_T.withName("max_err_data"),
            SIZE_T.withName("mr_cnt"),
            U32.withName("tclass"));

    /**
     *
     *
     * <pre>
     * struct fi_fabric_attr {
     *     struct fid_fabric *fabric; char *name; char *prov_name; uint32_t prov_version; uint32_t api_version;
     * };</pre>
     */
    public static final StructLayout FI_FABRIC_ATTR = struct(
            "fi_fabric_attr",
            POINTER.withName("fabric"),
            POINTER.withName("name"),
            POINTER.withName("prov_name"),
            U32.withName("prov_version"),
            U32.withName("api_version"));

    /**
     *
     *
     * <pre>
     * struct fi_info {
     *     struct fi_info *next; uint64_t caps; uint64_t mode; uint32_t addr_format; size_t src_addrlen;
     *     size_t dest_addrlen; void *src_addr; void *dest_addr; fid_t handle; struct fi_tx_attr *tx_attr;
     *     struct fi_rx_attr *rx_attr; struct fi_ep_attr *ep_attr; struct fi_domain_attr *domain_attr;
     *     struct fi_fabric_attr *fabric_attr; struct fid_nic *nic;
     * };</pre>
     */
    public static final StructLayout FI_INFO = struct(
            "fi_info",
            POINTER.withName("next"),
            U64.withName("caps"),
            U64.withName("mode"),
            U32.withName("addr_format"),
            SIZE_T.withName("src_addrlen"),
            SIZE_T.withName("dest_addrlen"),
            POINTER.withName("src_addr"),
            POINTER.withName("dest_addr"),
            POINTER.withName("handle"),
            POINTER.withName("tx_attr"),
            POINTER.withName("rx_attr"),
            POINTER.withName("ep_attr"),
            POINTER.withName("domain_attr"),
            POINTER.withName("fabric_attr"),
            POINTER.withName("nic"));

    /**
     *
     *
     * <pre>
     * struct fi_ops {
     *     size_t size;
     *     int (*close)(struct fid *fid);
     *     int (*bind)(struct fid *fid, struct fid *bfid, uint64_t flags);
     *     int (*control)(struct fid *fid, int command, void *arg);
     *     int (*ops_open)(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context);
     *     int (*tostr)(const struct fid *fid, char *buf, size_t len);
     *     int (*ops_set)(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context);
     * };</pre>
     */
    public static final StructLayout FI_OPS = struct(
            "fi_ops",
            SIZE_T.withName("size"),
            POINTER.withName("close"),
            POINTER.withName("bind"),
            POINTER.withName("control"),
            POINTER.withName("ops_open"),
            POINTER.withName("tostr"),
            POINTER.withName("ops_set"));

    /** {@code struct fid { size_t fclass; void *context; struct fi_ops *ops; };} */
    public static final StructLayout FID =
            struct("fid", SIZE_T.withName("fclass"), POINTER.withName("context"), POINTER.withName("ops"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_fabric {
     *     size_t size;
     *     int (*domain)(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom, void *context);
     *     int (*passive_ep)(...); int (*eq_open)(...); int (*wait_open)(...); int (*trywait)(...); int (*domain2)(...);
     * };</pre>
     */
    public static final StructLayout FI_OPS_FABRIC = struct(
            "fi_ops_fabric",
            SIZE_T.withName("size"),
            POINTER.withName("domain"),
            POINTER.withName("passive_ep"),
            POINTER.withName("eq_open"),
            POINTER.withName("wait_open"),
            POINTER.withName("trywait"),
            POINTER.withName("domain2"));

    /** {@code struct fid_fabric { struct fid fid; struct fi_ops_fabric *ops; uint32_t api_version; };} */
    public static final StructLayout FID_FABRIC =
            struct("fid_fabric", FID.withName("fid"), POINTER.withName("ops"), U32.withName("api_version"));

    public static final long INFO_NEXT = offset(FI_INFO, "next");
    public static final long INFO_CAPS = offset(FI_INFO, "caps");
    public static final long INFO_MODE = offset(FI_INFO, "mode");
    public static final long INFO_ADDR_FORMAT = offset(FI_INFO, "addr_format");
    public static final long INFO_SRC_ADDRLEN = offset(FI_INFO, "src_addrlen");
    public static final long INFO_SRC_ADDR = offset(FI_INFO, "src_addr");
    public static final long INFO_TX_ATTR = offset(FI_INFO, "tx_attr");
    public static final long INFO_RX_ATTR = offset(FI_INFO, "rx_attr");
    public static final long INFO_EP_ATTR = offset(FI_INFO, "ep_attr");
    public static final long INFO_DOMAIN_ATTR = offset(FI_INFO, "domain_attr");
    public static final long INFO_FABRIC_ATTR = offset(FI_INFO, "fabric_attr");

    public static final long TX_CAPS = offset(FI_TX_ATTR, "caps");
    public static final long TX_MODE = offset(FI_TX_ATTR, "mode");
    public static final long TX_OP_FLAGS = offset(FI_TX_ATTR, "op_flags");
    public static final long TX_INJECT_SIZE = offset(FI_TX_ATTR, "inject_size");
    public static final long TX_SIZE = offset(FI_TX_ATTR, "size");
    public static final long TX_IOV_LIMIT = offset(FI_TX_ATTR, "iov_limit");
    public static final long TX_RMA_IOV_LIMIT = offset(FI_TX_ATTR, "rma_iov_limit");
    public static final long RX_CAPS = offset(FI_RX_ATTR, "caps");
    public static final long RX_MODE = offset(FI_RX_ATTR, "mode");
    public static final long RX_SIZE = offset(FI_RX_ATTR, "size");
    public static final long EP_TYPE = offset(FI_EP_ATTR, "type");
    public static final long EP_MAX_MSG_SIZE = offset(FI_EP_ATTR, "max_msg_size");
    public static final long DOMAIN_NAME = offset(FI_DOMAIN_ATTR, "name");
    public static final long DOMAIN_THREADING = offset(FI_DOMAIN_ATTR, "threading");
    public static final long DOMAIN_CONTROL_PROGRESS = offset(FI_DOMAIN_ATTR, "control_progress");
    public static final long DOMAIN_DATA_PROGRESS = offset(FI_DOMAIN_ATTR, "data_progress");
    public static final long DOMAIN_AV_TYPE = offset(FI_DOMAIN_ATTR, "av_type");
    public static final long DOMAIN_MR_MODE = offset(FI_DOMAIN_ATTR, "mr_mode");
    public static final long DOMAIN_MR_KEY_SIZE = offset(FI_DOMAIN_ATTR, "mr_key_size");
    public static final long DOMAIN_CQ_DATA_SIZE = offset(FI_DOMAIN_ATTR, "cq_data_size");
    public static final long FABRIC_NAME = offset(FI_FABRIC_ATTR, "name");
    public static final long FABRIC_PROV_NAME = offset(FI_FABRIC_ATTR, "prov_name");
    public static final long FABRIC_PROV_VERSION = offset(FI_FABRIC_ATTR, "prov_version");
    public static final long FABRIC_API_VERSION = offset(FI_FABRIC_ATTR, "api_version");

    public static final long FID_OPS = offset(FID, "ops");
    public static final long OPS_CLOSE = offset(FI_OPS, "close");
    public static final long OPS_BIND = offset(FI_OPS, "bind");
    public static final long OPS_CONTROL = offset(FI_OPS, "control");
    public static final long FABRIC_OPS = offset(FID_FABRIC, "ops");
    public static final long OPS_FABRIC_DOMAIN = offset(FI_OPS_FABRIC, "domain");
    public static final long OPS_FABRIC_TRYWAIT = offset(FI_OPS_FABRIC, "trywait");
}
