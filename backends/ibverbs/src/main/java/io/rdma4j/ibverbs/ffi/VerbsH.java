package io.rdma4j.ibverbs.ffi;

import static io.rdma4j.ffi.Structs.INT;
import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.SIZE_T;
import static io.rdma4j.ffi.Structs.U16;
import static io.rdma4j.ffi.Structs.U32;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.U8;

import io.rdma4j.ffi.Structs;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Layouts, offsets and constants of {@code <infiniband/verbs.h>} (rdma-core), member names as in C. Every offset here
 * is compared with gcc's {@code offsetof} against the installed header by {@code VerbsLayoutTest}.
 *
 * <p>One unit, though long: the house style keeps one class per C header, so a reader finds a verbs.h name by grepping
 * one file, and the layouts reference each other in the header's order.
 */
public final class VerbsH {
    private VerbsH() {}

    /** {@code pthread_mutex_t}: 40 bytes on x86_64, 48 on aarch64, 8-aligned. */
    static final long PTHREAD_MUTEX_SIZE = "aarch64".equals(System.getProperty("os.arch")) ? 48 : 40;

    static MemoryLayout opaque(String name, long size) {
        return MemoryLayout.sequenceLayout(size, U8).withByteAlignment(8).withName(name);
    }

    /** {@code union ibv_gid { uint8_t raw[16]; struct { __be64 subnet_prefix; __be64 interface_id; } global; };} */
    public static final UnionLayout IBV_GID = Structs.union(
            "ibv_gid",
            Structs.array("raw", 16, U8),
            Structs.struct("global", U64.withName("subnet_prefix"), U64.withName("interface_id")));

    /** {@code struct ibv_device_attr} (fw_ver[64], guids, limits..., max_pkeys, local_ca_ack_delay, phys_port_cnt). */
    public static final StructLayout IBV_DEVICE_ATTR;

    static {
        List<MemoryLayout> m = new ArrayList<>(List.of(
                Structs.array("fw_ver", 64, U8),
                U64.withName("node_guid"),
                U64.withName("sys_image_guid"),
                U64.withName("max_mr_size"),
                U64.withName("page_size_cap"),
                U32.withName("vendor_id"),
                U32.withName("vendor_part_id"),
                U32.withName("hw_ver")));
        for (String n : List.of(
                "max_qp",
                "max_qp_wr",
                "device_cap_flags",
                "max_sge",
                "max_sge_rd",
                "max_cq",
                "max_cqe",
                "max_mr",
                "max_pd",
                "max_qp_rd_atom",
                "max_ee_rd_atom",
                "max_res_rd_atom",
                "max_qp_init_rd_atom",
                "max_ee_init_rd_atom",
                "atomic_cap",
                "max_ee",
                "max_rdd",
                "max_mw",
                "max_raw_ipv6_qp",
                "max_raw_ethy_qp",
                "max_mcast_grp",
                "max_mcast_qp_attach",
                "max_total_mcast_qp_attach",
                "max_ah",
                "max_fmr",
                "max_map_per_fmr",
                "max_srq",
                "max_srq_wr",
                "max_srq_sge")) {
            m.add(INT.withName(n));
        }
        m.add(U16.withName("max_pkeys"));
        m.add(U8.withName("local_ca_ack_delay"));
        m.add(U8.withName("phys_port_cnt"));
        IBV_DEVICE_ATTR = Structs.struct("ibv_device_attr", m.toArray(MemoryLayout[]::new));
    }

    /**
     * {@code struct ibv_port_attr { enum ibv_port_state state; enum ibv_mtu max_mtu; enum ibv_mtu active_mtu; int
     * gid_tbl_len; uint32_t port_cap_flags, max_msg_sz, bad_pkey_cntr, qkey_viol_cntr; uint16_t pkey_tbl_len, lid,
     * sm_lid; uint8_t lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply, active_width, active_speed, phys_state,
     * link_layer, flags; uint16_t port_cap_flags2; };}
     */
    public static final StructLayout IBV_PORT_ATTR = Structs.struct(
            "ibv_port_attr",
            INT.withName("state"),
            INT.withName("max_mtu"),
            INT.withName("active_mtu"),
            INT.withName("gid_tbl_len"),
            U32.withName("port_cap_flags"),
            U32.withName("max_msg_sz"),
            U32.withName("bad_pkey_cntr"),
            U32.withName("qkey_viol_cntr"),
            U16.withName("pkey_tbl_len"),
            U16.withName("lid"),
            U16.withName("sm_lid"),
            U8.withName("lmc"),
            U8.withName("max_vl_num"),
            U8.withName("sm_sl"),
            U8.withName("subnet_timeout"),
            U8.withName("init_type_reply"),
            U8.withName("active_width"),
            U8.withName("active_speed"),
            U8.withName("phys_state"),
            U8.withName("link_layer"),
            U8.withName("flags"),
            U16.withName("port_cap_flags2"));

    /**
     * {@code struct ibv_gid_entry { union ibv_gid gid; uint32_t gid_index; uint32_t port_num; uint32_t gid_type;
     * uint32_t ndev_ifindex; };}
     */
    public static final StructLayout IBV_GID_ENTRY = Structs.struct(
            "ibv_gid_entry",
            IBV_GID.withName("gid"),
            U32.withName("gid_index"),
            U32.withName("port_num"),
            U32.withName("gid_type"),
            U32.withName("ndev_ifindex"));

    /** {@code struct ibv_sge { uint64_t addr; uint32_t length; uint32_t lkey; };} */
    public static final StructLayout IBV_SGE =
            Structs.struct("ibv_sge", U64.withName("addr"), U32.withName("length"), U32.withName("lkey"));

    /**
     * {@code struct ibv_qp_cap { uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data; };}
     */
    public static final StructLayout IBV_QP_CAP_STRUCT = Structs.struct(
            "ibv_qp_cap",
            U32.withName("max_send_wr"),
            U32.withName("max_recv_wr"),
            U32.withName("max_send_sge"),
            U32.withName("max_recv_sge"),
            U32.withName("max_inline_data"));

    /**
     * {@code struct ibv_qp_init_attr { void *qp_context; struct ibv_cq *send_cq; struct ibv_cq *recv_cq; struct ibv_srq
     * *srq; struct ibv_qp_cap cap; enum ibv_qp_type qp_type; int sq_sig_all; };}
     */
    public static final StructLayout IBV_QP_INIT_ATTR = Structs.struct(
            "ibv_qp_init_attr",
            POINTER.withName("qp_context"),
            POINTER.withName("send_cq"),
            POINTER.withName("recv_cq"),
            POINTER.withName("srq"),
            IBV_QP_CAP_STRUCT.withName("cap"),
            INT.withName("qp_type"),
            INT.withName("sq_sig_all"));

    /**
     * {@code struct ibv_global_route { union ibv_gid dgid; uint32_t flow_label; uint8_t sgid_index; uint8_t hop_limit;
     * uint8_t traffic_class; };}
     */
    public static final StructLayout IBV_GLOBAL_ROUTE = Structs.struct(
            "ibv_global_route",
            IBV_GID.withName("dgid"),
            U32.withName("flow_label"),
            U8.withName("sgid_index"),
            U8.withName("hop_limit"),
            U8.withName("traffic_class"));

    /**
     * {@code struct ibv_ah_attr { struct ibv_global_route grh; uint16_t dlid; uint8_t sl; uint8_t src_path_bits;
     * uint8_t static_rate; uint8_t is_global; uint8_t port_num; };}
     */
    public static final StructLayout IBV_AH_ATTR = Structs.struct(
            "ibv_ah_attr",
            IBV_GLOBAL_ROUTE.withName("grh"),
            U16.withName("dlid"),
            U8.withName("sl"),
            U8.withName("src_path_bits"),
            U8.withName("static_rate"),
            U8.withName("is_global"),
            U8.withName("port_num"));

    /**
     * {@code struct ibv_qp_attr { enum ibv_qp_state qp_state, cur_qp_state; enum ibv_mtu path_mtu; enum ibv_mig_state
     * path_mig_state; uint32_t qkey, rq_psn, sq_psn, dest_qp_num; unsigned int qp_access_flags; struct ibv_qp_cap cap;
     * struct ibv_ah_attr ah_attr, alt_ah_attr; uint16_t pkey_index, alt_pkey_index; uint8_t en_sqd_async_notify,
     * sq_draining, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num, timeout, retry_cnt, rnr_retry,
     * alt_port_num, alt_timeout; uint32_t rate_limit; };}
     */
    public static final StructLayout IBV_QP_ATTR = Structs.struct(
            "ibv_qp_attr",
            INT.withName("qp_state"),
            INT.withName("cur_qp_state"),
            INT.withName("path_mtu"),
            INT.withName("path_mig_state"),
            U32.withName("qkey"),
            U32.withName("rq_psn"),
            U32.withName("sq_psn"),
            U32.withName("dest_qp_num"),
            U32.withName("qp_access_flags"),
            IBV_QP_CAP_STRUCT.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"),
            IBV_AH_ATTR.withName("alt_ah_attr"),
            U16.withName("pkey_index"),
            U16.withName("alt_pkey_index"),
            U8.withName("en_sqd_async_notify"),
            U8.withName("sq_draining"),
            U8.withName("max_rd_atomic"),
            U8.withName("max_dest_rd_atomic"),
            U8.withName("min_rnr_timer"),
            U8.withName("port_num"),
            U8.withName("timeout"),
            U8.withName("retry_cnt"),
            U8.withName("rnr_retry"),
            U8.withName("alt_port_num"),
            U8.withName("alt_timeout"),
            U32.withName("rate_limit"));

    /**
     * {@code struct ibv_mw_bind_info { struct ibv_mr *mr; uint64_t addr; uint64_t length; unsigned int mw_access_flags;
     * };}
     */
    public static final StructLayout IBV_MW_BIND_INFO = Structs.struct(
            "ibv_mw_bind_info",
            POINTER.withName("mr"),
            U64.withName("addr"),
            U64.withName("length"),
            U32.withName("mw_access_flags"));

    /**
     * {@code struct ibv_send_wr { uint64_t wr_id; struct ibv_send_wr *next; struct ibv_sge *sg_list; int num_sge; enum
     * ibv_wr_opcode opcode; unsigned int send_flags; union { __be32 imm_data; uint32_t invalidate_rkey; }; union {
     * struct { uint64_t remote_addr; uint32_t rkey; } rdma; struct { uint64_t remote_addr, compare_add, swap; uint32_t
     * rkey; } atomic; struct { struct ibv_ah *ah; uint32_t remote_qpn, remote_qkey; } ud; } wr; union { struct {
     * uint32_t remote_srqn; } xrc; } qp_type; union { struct { struct ibv_mw *mw; uint32_t rkey; struct
     * ibv_mw_bind_info bind_info; } bind_mw; struct { void *hdr; uint16_t hdr_sz; uint16_t mss; } tso; }; };}
     */
    public static final StructLayout IBV_SEND_WR = Structs.struct(
            "ibv_send_wr",
            U64.withName("wr_id"),
            POINTER.withName("next"),
            POINTER.withName("sg_list"),
            INT.withName("num_sge"),
            INT.withName("opcode"),
            U32.withName("send_flags"),
            Structs.union(null, U32.withName("imm_data"), U32.withName("invalidate_rkey")),
            Structs.union(
                    "wr",
                    Structs.struct("rdma", U64.withName("remote_addr"), U32.withName("rkey")),
                    Structs.struct(
                            "atomic",
                            U64.withName("remote_addr"),
                            U64.withName("compare_add"),
                            U64.withName("swap"),
                            U32.withName("rkey")),
                    Structs.struct(
                            "ud", POINTER.withName("ah"), U32.withName("remote_qpn"), U32.withName("remote_qkey"))),
            Structs.union("qp_type", Structs.struct("xrc", U32.withName("remote_srqn"))),
            Structs.union(
                    null,
                    Structs.struct(
                            "bind_mw",
                            POINTER.withName("mw"),
                            U32.withName("rkey"),
                            IBV_MW_BIND_INFO.withName("bind_info")),
                    Structs.struct("tso", POINTER.withName("hdr"), U16.withName("hdr_sz"), U16.withName("mss"))));

    /**
     * {@code struct ibv_recv_wr { uint64_t wr_id; struct ibv_recv_wr *next; struct ibv_sge *sg_list; int num_sge; };}
     */
    public static final StructLayout IBV_RECV_WR = Structs.struct(
            "ibv_recv_wr",
            U64.withName("wr_id"),
            POINTER.withName("next"),
            POINTER.withName("sg_list"),
            INT.withName("num_sge"));

    /**
     * {@code struct ibv_wc { uint64_t wr_id; enum ibv_wc_status status; enum ibv_wc_opcode opcode; uint32_t vendor_err;
     * uint32_t byte_len; union { __be32 imm_data; uint32_t invalidated_rkey; }; uint32_t qp_num; uint32_t src_qp;
     * unsigned int wc_flags; uint16_t pkey_index; uint16_t slid; uint8_t sl; uint8_t dlid_path_bits; };}
     */
    public static final StructLayout IBV_WC = Structs.struct(
            "ibv_wc",
            U64.withName("wr_id"),
            INT.withName("status"),
            INT.withName("opcode"),
            U32.withName("vendor_err"),
            U32.withName("byte_len"),
            Structs.union(null, U32.withName("imm_data"), U32.withName("invalidated_rkey")),
            U32.withName("qp_num"),
            U32.withName("src_qp"),
            U32.withName("wc_flags"),
            U16.withName("pkey_index"),
            U16.withName("slid"),
            U8.withName("sl"),
            U8.withName("dlid_path_bits"));

    /** {@code struct ibv_srq_attr { uint32_t max_wr; uint32_t max_sge; uint32_t srq_limit; };} */
    public static final StructLayout IBV_SRQ_ATTR =
            Structs.struct("ibv_srq_attr", U32.withName("max_wr"), U32.withName("max_sge"), U32.withName("srq_limit"));

    /** {@code struct ibv_srq_init_attr { void *srq_context; struct ibv_srq_attr attr; };} */
    public static final StructLayout IBV_SRQ_INIT_ATTR =
            Structs.struct("ibv_srq_init_attr", POINTER.withName("srq_context"), IBV_SRQ_ATTR.withName("attr"));

    /**
     * {@code struct ibv_async_event { union { struct ibv_cq *cq; struct ibv_qp *qp; struct ibv_srq *srq; struct ibv_wq
     * *wq; int port_num; } element; enum ibv_event_type event_type; };}
     */
    public static final StructLayout IBV_ASYNC_EVENT = Structs.struct(
            "ibv_async_event",
            Structs.union(
                    "element",
                    POINTER.withName("cq"),
                    POINTER.withName("qp"),
                    POINTER.withName("srq"),
                    POINTER.withName("wq"),
                    INT.withName("port_num")),
            INT.withName("event_type"));

    /**
     * {@code struct ibv_mr { struct ibv_context *context; struct ibv_pd *pd; void *addr; size_t length; uint32_t
     * handle, lkey, rkey; };}
     */
    public static final StructLayout IBV_MR = Structs.struct(
            "ibv_mr",
            POINTER.withName("context"),
            POINTER.withName("pd"),
            POINTER.withName("addr"),
            SIZE_T.withName("length"),
            U32.withName("handle"),
            U32.withName("lkey"),
            U32.withName("rkey"));

    /**
     * {@code struct ibv_qp { struct ibv_context *context; void *qp_context; struct ibv_pd *pd; struct ibv_cq *send_cq,
     * *recv_cq; struct ibv_srq *srq; uint32_t handle, qp_num; enum ibv_qp_state state; enum ibv_qp_type qp_type;
     * pthread_mutex_t mutex; pthread_cond_t cond; uint32_t events_completed; };}
     */
    public static final StructLayout IBV_QP = Structs.struct(
            "ibv_qp",
            POINTER.withName("context"),
            POINTER.withName("qp_context"),
            POINTER.withName("pd"),
            POINTER.withName("send_cq"),
            POINTER.withName("recv_cq"),
            POINTER.withName("srq"),
            U32.withName("handle"),
            U32.withName("qp_num"),
            INT.withName("state"),
            INT.withName("qp_type"),
            opaque("mutex", PTHREAD_MUTEX_SIZE),
            opaque("cond", 48),
            U32.withName("events_completed"));

    /**
     * {@code struct ibv_cq { struct ibv_context *context; struct ibv_comp_channel *channel; void *cq_context; uint32_t
     * handle; int cqe; pthread_mutex_t mutex; pthread_cond_t cond; uint32_t comp_events_completed,
     * async_events_completed; };}
     */
    public static final StructLayout IBV_CQ = Structs.struct(
            "ibv_cq",
            POINTER.withName("context"),
            POINTER.withName("channel"),
            POINTER.withName("cq_context"),
            U32.withName("handle"),
            INT.withName("cqe"),
            opaque("mutex", PTHREAD_MUTEX_SIZE),
            opaque("cond", 48),
            U32.withName("comp_events_completed"),
            U32.withName("async_events_completed"));

    /**
     * {@code struct ibv_srq { struct ibv_context *context; void *srq_context; struct ibv_pd *pd; uint32_t handle;
     * ...mutex, cond, events_completed; };}
     */
    public static final StructLayout IBV_SRQ = Structs.struct(
            "ibv_srq",
            POINTER.withName("context"),
            POINTER.withName("srq_context"),
            POINTER.withName("pd"),
            U32.withName("handle"),
            opaque("mutex", PTHREAD_MUTEX_SIZE),
            opaque("cond", 48),
            U32.withName("events_completed"));

    /** {@code struct ibv_comp_channel { struct ibv_context *context; int fd; int refcnt; };} */
    public static final StructLayout IBV_COMP_CHANNEL =
            Structs.struct("ibv_comp_channel", POINTER.withName("context"), INT.withName("fd"), INT.withName("refcnt"));

    /** {@code struct ibv_pd { struct ibv_context *context; uint32_t handle; };} */
    public static final StructLayout IBV_PD =
            Structs.struct("ibv_pd", POINTER.withName("context"), U32.withName("handle"));

    /** {@code struct ibv_ah { struct ibv_context *context; struct ibv_pd *pd; uint32_t handle; };} */
    public static final StructLayout IBV_AH =
            Structs.struct("ibv_ah", POINTER.withName("context"), POINTER.withName("pd"), U32.withName("handle"));

    /** The members of {@code struct ibv_context_ops}, in order: 32 function pointers. */
    static final List<String> CONTEXT_OPS = List.of(
            "_compat_query_device",
            "_compat_query_port",
            "_compat_alloc_pd",
            "_compat_dealloc_pd",
            "_compat_reg_mr",
            "_compat_rereg_mr",
            "_compat_dereg_mr",
            "alloc_mw",
            "bind_mw",
            "dealloc_mw",
            "_compat_create_cq",
            "poll_cq",
            "req_notify_cq",
            "_compat_cq_event",
            "_compat_resize_cq",
            "_compat_destroy_cq",
            "_compat_create_srq",
            "_compat_modify_srq",
            "_compat_query_srq",
            "_compat_destroy_srq",
            "post_srq_recv",
            "_compat_create_qp",
            "_compat_query_qp",
            "_compat_modify_qp",
            "_compat_destroy_qp",
            "post_send",
            "post_recv",
            "_compat_create_ah",
            "_compat_destroy_ah",
            "_compat_attach_mcast",
            "_compat_detach_mcast",
            "_compat_async_event");

    /**
     * {@code struct ibv_context_ops}: the provider's function table; the data-path verbs are {@code static inline}
     * calls through it.
     */
    public static final StructLayout IBV_CONTEXT_OPS = Structs.struct(
            "ibv_context_ops", CONTEXT_OPS.stream().map(POINTER::withName).toArray(MemoryLayout[]::new));

    /**
     * {@code struct ibv_context { struct ibv_device *device; struct ibv_context_ops ops; int cmd_fd; int async_fd; int
     * num_comp_vectors; pthread_mutex_t mutex; void *abi_compat; };}
     */
    public static final StructLayout IBV_CONTEXT = Structs.struct(
            "ibv_context",
            POINTER.withName("device"),
            IBV_CONTEXT_OPS.withName("ops"),
            INT.withName("cmd_fd"),
            INT.withName("async_fd"),
            INT.withName("num_comp_vectors"),
            opaque("mutex", PTHREAD_MUTEX_SIZE),
            POINTER.withName("abi_compat"));

    /**
     * The members of {@code struct verbs_context} before {@code sz}; it "grows up" and sits in memory just before its
     * ibv_context.
     */
    static final List<String> VERBS_CONTEXT_OPS = List.of(
            "query_port",
            "advise_mr",
            "alloc_null_mr",
            "read_counters",
            "attach_counters_point_flow",
            "create_counters",
            "destroy_counters",
            "reg_dm_mr",
            "alloc_dm",
            "free_dm",
            "modify_flow_action_esp",
            "destroy_flow_action",
            "create_flow_action_esp",
            "modify_qp_rate_limit",
            "alloc_parent_domain",
            "dealloc_td",
            "alloc_td",
            "modify_cq",
            "post_srq_ops",
            "destroy_rwq_ind_table",
            "create_rwq_ind_table",
            "destroy_wq",
            "modify_wq",
            "create_wq",
            "query_rt_values",
            "create_cq_ex",
            "priv",
            "query_device_ex",
            "ibv_destroy_flow",
            "ABI_placeholder2",
            "ibv_create_flow",
            "ABI_placeholder1",
            "open_qp",
            "create_qp_ex",
            "get_srq_num",
            "create_srq_ex",
            "open_xrcd",
            "close_xrcd",
            "_ABI_placeholder3");

    /**
     * {@code struct verbs_context { ...extended ops...; uint64_t _ABI_placeholder3; size_t sz; struct ibv_context
     * context; };}
     */
    public static final StructLayout VERBS_CONTEXT;

    static {
        List<MemoryLayout> m = new ArrayList<>();
        for (String n : VERBS_CONTEXT_OPS) {
            m.add(n.equals("_ABI_placeholder3") ? U64.withName(n) : POINTER.withName(n));
        }
        m.add(SIZE_T.withName("sz"));
        m.add(IBV_CONTEXT.withName("context"));
        VERBS_CONTEXT = Structs.struct("verbs_context", m.toArray(MemoryLayout[]::new));
    }

    // ---- precomputed offsets used by the bindings
    public static final long CONTEXT_OPS_OFFSET = Structs.offset(IBV_CONTEXT, "ops");
    public static final long CONTEXT_ASYNC_FD = Structs.offset(IBV_CONTEXT, "async_fd");
    public static final long CONTEXT_NUM_COMP_VECTORS = Structs.offset(IBV_CONTEXT, "num_comp_vectors");
    public static final long CONTEXT_ABI_COMPAT = Structs.offset(IBV_CONTEXT, "abi_compat");
    public static final long OPS_POLL_CQ = Structs.offset(IBV_CONTEXT, "ops.poll_cq");
    public static final long OPS_REQ_NOTIFY_CQ = Structs.offset(IBV_CONTEXT, "ops.req_notify_cq");
    public static final long OPS_POST_SEND = Structs.offset(IBV_CONTEXT, "ops.post_send");
    public static final long OPS_POST_RECV = Structs.offset(IBV_CONTEXT, "ops.post_recv");
    public static final long OPS_POST_SRQ_RECV = Structs.offset(IBV_CONTEXT, "ops.post_srq_recv");
    /**
     * {@code offsetof(struct verbs_context, context)}: the verbs_context starts this many bytes before the ibv_context.
     */
    public static final long VCTX_CONTEXT = Structs.offset(VERBS_CONTEXT, "context");

    public static final long VCTX_SZ = Structs.offset(VERBS_CONTEXT, "sz");
    public static final long VCTX_QUERY_PORT = Structs.offset(VERBS_CONTEXT, "query_port");

    public static final long MR_LKEY = Structs.offset(IBV_MR, "lkey");
    public static final long MR_RKEY = Structs.offset(IBV_MR, "rkey");
    public static final long QP_QP_NUM = Structs.offset(IBV_QP, "qp_num");
    public static final long QP_CONTEXT = Structs.offset(IBV_QP, "context");
    public static final long COMP_CHANNEL_FD = Structs.offset(IBV_COMP_CHANNEL, "fd");

    public static final long SWR_WR_ID = Structs.offset(IBV_SEND_WR, "wr_id");
    public static final long SWR_NEXT = Structs.offset(IBV_SEND_WR, "next");
    public static final long SWR_SG_LIST = Structs.offset(IBV_SEND_WR, "sg_list");
    public static final long SWR_NUM_SGE = Structs.offset(IBV_SEND_WR, "num_sge");
    public static final long SWR_OPCODE = Structs.offset(IBV_SEND_WR, "opcode");
    public static final long SWR_SEND_FLAGS = Structs.offset(IBV_SEND_WR, "send_flags");
    public static final long SWR_IMM_DATA = Structs.offset(IBV_SEND_WR, "imm_data");
    public static final long SWR_RDMA_REMOTE_ADDR = Structs.offset(IBV_SEND_WR, "wr.rdma.remote_addr");
    public static final long SWR_RDMA_RKEY = Structs.offset(IBV_SEND_WR, "wr.rdma.rkey");
    public static final long SWR_ATOMIC_REMOTE_ADDR = Structs.offset(IBV_SEND_WR, "wr.atomic.remote_addr");
    public static final long SWR_ATOMIC_COMPARE_ADD = Structs.offset(IBV_SEND_WR, "wr.atomic.compare_add");
    public static final long SWR_ATOMIC_SWAP = Structs.offset(IBV_SEND_WR, "wr.atomic.swap");
    public static final long SWR_ATOMIC_RKEY = Structs.offset(IBV_SEND_WR, "wr.atomic.rkey");
    public static final long SWR_UD_AH = Structs.offset(IBV_SEND_WR, "wr.ud.ah");
    public static final long SWR_UD_REMOTE_QPN = Structs.offset(IBV_SEND_WR, "wr.ud.remote_qpn");
    public static final long SWR_UD_REMOTE_QKEY = Structs.offset(IBV_SEND_WR, "wr.ud.remote_qkey");
    public static final long RWR_WR_ID = Structs.offset(IBV_RECV_WR, "wr_id");
    public static final long RWR_NEXT = Structs.offset(IBV_RECV_WR, "next");
    public static final long RWR_SG_LIST = Structs.offset(IBV_RECV_WR, "sg_list");
    public static final long RWR_NUM_SGE = Structs.offset(IBV_RECV_WR, "num_sge");
    public static final long SGE_ADDR = Structs.offset(IBV_SGE, "addr");
    public static final long SGE_LENGTH = Structs.offset(IBV_SGE, "length");
    public static final long SGE_LKEY = Structs.offset(IBV_SGE, "lkey");

    public static final long WC_WR_ID = Structs.offset(IBV_WC, "wr_id");
    public static final long WC_STATUS = Structs.offset(IBV_WC, "status");
    public static final long WC_OPCODE = Structs.offset(IBV_WC, "opcode");
    public static final long WC_VENDOR_ERR = Structs.offset(IBV_WC, "vendor_err");
    public static final long WC_BYTE_LEN = Structs.offset(IBV_WC, "byte_len");
    public static final long WC_IMM_DATA = Structs.offset(IBV_WC, "imm_data");
    public static final long WC_QP_NUM = Structs.offset(IBV_WC, "qp_num");
    public static final long WC_SRC_QP = Structs.offset(IBV_WC, "src_qp");
    public static final long WC_WC_FLAGS = Structs.offset(IBV_WC, "wc_flags");
    public static final long WC_SLID = Structs.offset(IBV_WC, "slid");

    // ---- enum ibv_wr_opcode
    public static final int IBV_WR_RDMA_WRITE = 0;
    public static final int IBV_WR_RDMA_WRITE_WITH_IMM = 1;
    public static final int IBV_WR_SEND = 2;
    public static final int IBV_WR_SEND_WITH_IMM = 3;
    public static final int IBV_WR_RDMA_READ = 4;
    public static final int IBV_WR_ATOMIC_CMP_AND_SWP = 5;
    public static final int IBV_WR_ATOMIC_FETCH_AND_ADD = 6;
    public static final int IBV_WR_LOCAL_INV = 7;
    public static final int IBV_WR_BIND_MW = 8;
    public static final int IBV_WR_SEND_WITH_INV = 9;
    public static final int IBV_WR_TSO = 10;

    // ---- enum ibv_send_flags
    public static final int IBV_SEND_FENCE = 1;
    public static final int IBV_SEND_SIGNALED = 1 << 1;
    public static final int IBV_SEND_SOLICITED = 1 << 2;
    public static final int IBV_SEND_INLINE = 1 << 3;

    // ---- enum ibv_wc_status
    public static final int IBV_WC_SUCCESS = 0;
    public static final int IBV_WC_LOC_LEN_ERR = 1;
    public static final int IBV_WC_LOC_QP_OP_ERR = 2;
    public static final int IBV_WC_LOC_PROT_ERR = 4;
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    public static final int IBV_WC_REM_INV_REQ_ERR = 9;
    public static final int IBV_WC_REM_ACCESS_ERR = 10;
    public static final int IBV_WC_REM_OP_ERR = 11;
    public static final int IBV_WC_RETRY_EXC_ERR = 12;
    public static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;
    public static final int IBV_WC_GENERAL_ERR = 21;
    /** Names of {@code enum ibv_wc_status} by value. */
    public static final List<String> WC_STATUS_NAMES = List.of(
            "IBV_WC_SUCCESS",
            "IBV_WC_LOC_LEN_ERR",
            "IBV_WC_LOC_QP_OP_ERR",
            "IBV_WC_LOC_EEC_OP_ERR",
            "IBV_WC_LOC_PROT_ERR",
            "IBV_WC_WR_FLUSH_ERR",
            "IBV_WC_MW_BIND_ERR",
            "IBV_WC_BAD_RESP_ERR",
            "IBV_WC_LOC_ACCESS_ERR",
            "IBV_WC_REM_INV_REQ_ERR",
            "IBV_WC_REM_ACCESS_ERR",
            "IBV_WC_REM_OP_ERR",
            "IBV_WC_RETRY_EXC_ERR",
            "IBV_WC_RNR_RETRY_EXC_ERR",
            "IBV_WC_LOC_RDD_VIOL_ERR",
            "IBV_WC_REM_INV_RD_REQ_ERR",
            "IBV_WC_REM_ABORT_ERR",
            "IBV_WC_INV_EECN_ERR",
            "IBV_WC_INV_EEC_STATE_ERR",
            "IBV_WC_FATAL_ERR",
            "IBV_WC_RESP_TIMEOUT_ERR",
            "IBV_WC_GENERAL_ERR",
            "IBV_WC_TM_ERR",
            "IBV_WC_TM_RNDV_INCOMPLETE");

    // ---- enum ibv_wc_opcode
    public static final int IBV_WC_SEND = 0;
    public static final int IBV_WC_RDMA_WRITE = 1;
    public static final int IBV_WC_RDMA_READ = 2;
    public static final int IBV_WC_COMP_SWAP = 3;
    public static final int IBV_WC_FETCH_ADD = 4;
    public static final int IBV_WC_RECV = 1 << 7;
    public static final int IBV_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1;

    // ---- enum ibv_wc_flags
    public static final int IBV_WC_GRH = 1;
    public static final int IBV_WC_WITH_IMM = 1 << 1;

    // ---- enum ibv_qp_attr_mask
    public static final int IBV_QP_STATE = 1;
    public static final int IBV_QP_CUR_STATE = 1 << 1;
    public static final int IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2;
    public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    public static final int IBV_QP_PKEY_INDEX = 1 << 4;
    public static final int IBV_QP_PORT = 1 << 5;
    public static final int IBV_QP_QKEY = 1 << 6;
    public static final int IBV_QP_AV = 1 << 7;
    public static final int IBV_QP_PATH_MTU = 1 << 8;
    public static final int IBV_QP_TIMEOUT = 1 << 9;
    public static final int IBV_QP_RETRY_CNT = 1 << 10;
    public static final int IBV_QP_RNR_RETRY = 1 << 11;
    public static final int IBV_QP_RQ_PSN = 1 << 12;
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    public static final int IBV_QP_ALT_PATH = 1 << 14;
    public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    public static final int IBV_QP_SQ_PSN = 1 << 16;
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    public static final int IBV_QP_PATH_MIG_STATE = 1 << 18;
    public static final int IBV_QP_CAP = 1 << 19;
    public static final int IBV_QP_DEST_QPN = 1 << 20;
    public static final int IBV_QP_RATE_LIMIT = 1 << 25;

    // ---- enum ibv_access_flags
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;
    public static final int IBV_ACCESS_MW_BIND = 1 << 4;
    public static final int IBV_ACCESS_ZERO_BASED = 1 << 5;
    public static final int IBV_ACCESS_ON_DEMAND = 1 << 6;
    public static final int IBV_ACCESS_HUGETLB = 1 << 7;
    public static final int IBV_ACCESS_RELAXED_ORDERING = 1 << 20;
    /** {@code IBV_ACCESS_OPTIONAL_FIRST}: flags from here up are optional (a device that lacks one ignores it). */
    public static final int IBV_ACCESS_OPTIONAL_FIRST = 1 << 20;
    /** {@code IBV_ACCESS_OPTIONAL_RANGE}: bits 20..29. */
    public static final int IBV_ACCESS_OPTIONAL_RANGE = 0x3FF0_0000;

    // ---- enum ibv_mtu
    public static final int IBV_MTU_256 = 1;
    public static final int IBV_MTU_512 = 2;
    public static final int IBV_MTU_1024 = 3;
    public static final int IBV_MTU_2048 = 4;
    public static final int IBV_MTU_4096 = 5;

    // ---- enum ibv_qp_state
    public static final int IBV_QPS_RESET = 0;
    public static final int IBV_QPS_INIT = 1;
    public static final int IBV_QPS_RTR = 2;
    public static final int IBV_QPS_RTS = 3;
    public static final int IBV_QPS_SQD = 4;
    public static final int IBV_QPS_SQE = 5;
    public static final int IBV_QPS_ERR = 6;
    public static final int IBV_QPS_UNKNOWN = 7;
    public static final List<String> QP_STATE_NAMES =
            List.of("RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN");

    // ---- enum ibv_qp_type
    public static final int IBV_QPT_RC = 2;
    public static final int IBV_QPT_UC = 3;
    public static final int IBV_QPT_UD = 4;

    // ---- enum ibv_port_state, ibv_gid_type, link layer
    public static final int IBV_PORT_ACTIVE = 4;
    public static final int IBV_GID_TYPE_IB = 0;
    public static final int IBV_GID_TYPE_ROCE_V1 = 1;
    public static final int IBV_GID_TYPE_ROCE_V2 = 2;
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    // ---- enum ibv_event_type
    public static final List<String> EVENT_TYPE_NAMES = List.of(
            "IBV_EVENT_CQ_ERR",
            "IBV_EVENT_QP_FATAL",
            "IBV_EVENT_QP_REQ_ERR",
            "IBV_EVENT_QP_ACCESS_ERR",
            "IBV_EVENT_COMM_EST",
            "IBV_EVENT_SQ_DRAINED",
            "IBV_EVENT_PATH_MIG",
            "IBV_EVENT_PATH_MIG_ERR",
            "IBV_EVENT_DEVICE_FATAL",
            "IBV_EVENT_PORT_ACTIVE",
            "IBV_EVENT_PORT_ERR",
            "IBV_EVENT_LID_CHANGE",
            "IBV_EVENT_PKEY_CHANGE",
            "IBV_EVENT_SM_CHANGE",
            "IBV_EVENT_SRQ_ERR",
            "IBV_EVENT_SRQ_LIMIT_REACHED",
            "IBV_EVENT_QP_LAST_WQE_REACHED",
            "IBV_EVENT_CLIENT_REREGISTER",
            "IBV_EVENT_GID_CHANGE",
            "IBV_EVENT_WQ_FATAL");

    /** Bytes of a GRH at the start of every UD receive buffer. */
    public static final int GRH_BYTES = 40;

    /** Bytes per MTU enum value ({@code IBV_MTU_1024} -> 1024), or -1 for an invalid value. */
    public static int mtuBytes(int mtu) {
        return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : -1;
    }
}
