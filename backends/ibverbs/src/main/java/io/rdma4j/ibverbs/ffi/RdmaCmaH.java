package io.rdma4j.ibverbs.ffi;

import static io.rdma4j.ffi.Structs.INT;
import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.U16;
import static io.rdma4j.ffi.Structs.U32;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.U8;

import io.rdma4j.ffi.Structs;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.util.List;

/**
 * Layouts, offsets and constants of {@code <rdma/rdma_cma.h>} (librdmacm) and the socket addresses it takes, member
 * names as in C, checked with gcc by {@code RdmaCmLayoutTest}.
 */
public final class RdmaCmaH {
    private RdmaCmaH() {}

    /** {@code struct sockaddr { sa_family_t sa_family; char sa_data[14]; };} */
    public static final StructLayout SOCKADDR =
            Structs.struct("sockaddr", U16.withName("sa_family"), Structs.array("sa_data", 14, U8));
    /**
     * {@code struct sockaddr_in { sa_family_t sin_family; in_port_t sin_port; struct in_addr { in_addr_t s_addr; }
     * sin_addr; unsigned char sin_zero[8]; };}
     */
    public static final StructLayout SOCKADDR_IN = Structs.struct(
            "sockaddr_in",
            U16.withName("sin_family"),
            U16.withName("sin_port"),
            Structs.struct("sin_addr", U32.withName("s_addr")),
            Structs.array("sin_zero", 8, U8));
    /**
     * {@code struct sockaddr_in6 { sa_family_t sin6_family; in_port_t sin6_port; uint32_t sin6_flowinfo; struct
     * in6_addr sin6_addr; uint32_t sin6_scope_id; };}
     */
    public static final StructLayout SOCKADDR_IN6 = Structs.struct(
            "sockaddr_in6",
            U16.withName("sin6_family"),
            U16.withName("sin6_port"),
            U32.withName("sin6_flowinfo"),
            Structs.array("sin6_addr", 16, U8),
            U32.withName("sin6_scope_id"));
    /** {@code struct sockaddr_storage { sa_family_t ss_family; char __ss_padding[118]; unsigned long __ss_align; };} */
    public static final StructLayout SOCKADDR_STORAGE = Structs.struct(
            "sockaddr_storage",
            U16.withName("ss_family"),
            Structs.array("__ss_padding", 118, U8),
            U64.withName("__ss_align"));

    /** {@code struct rdma_ib_addr { union ibv_gid sgid; union ibv_gid dgid; __be16 pkey; };} */
    public static final StructLayout RDMA_IB_ADDR = Structs.struct(
            "rdma_ib_addr", VerbsH.IBV_GID.withName("sgid"), VerbsH.IBV_GID.withName("dgid"), U16.withName("pkey"));

    private static UnionLayout addressUnion(String prefix) {
        return Structs.union(
                null,
                SOCKADDR.withName(prefix + "_addr"),
                SOCKADDR_IN.withName(prefix + "_sin"),
                SOCKADDR_IN6.withName(prefix + "_sin6"),
                SOCKADDR_STORAGE.withName(prefix + "_storage"));
    }

    /**
     * {@code struct rdma_addr { union { src_addr, src_sin, src_sin6, src_storage }; union { dst_... }; union { struct
     * rdma_ib_addr ibaddr; } addr; };}
     */
    public static final StructLayout RDMA_ADDR = Structs.struct(
            "rdma_addr",
            addressUnion("src"),
            addressUnion("dst"),
            Structs.union("addr", RDMA_IB_ADDR.withName("ibaddr")));

    /** {@code struct rdma_route { struct rdma_addr addr; struct ibv_sa_path_rec *path_rec; int num_paths; };} */
    public static final StructLayout RDMA_ROUTE = Structs.struct(
            "rdma_route", RDMA_ADDR.withName("addr"), POINTER.withName("path_rec"), INT.withName("num_paths"));

    /**
     * {@code struct rdma_cm_id { struct ibv_context *verbs; struct rdma_event_channel *channel; void *context; struct
     * ibv_qp *qp; struct rdma_route route; enum rdma_port_space ps; uint8_t port_num; struct rdma_cm_event *event;
     * struct ibv_comp_channel *send_cq_channel; struct ibv_cq *send_cq; struct ibv_comp_channel *recv_cq_channel;
     * struct ibv_cq *recv_cq; struct ibv_srq *srq; struct ibv_pd *pd; enum ibv_qp_type qp_type; };}
     */
    public static final StructLayout RDMA_CM_ID = Structs.struct(
            "rdma_cm_id",
            POINTER.withName("verbs"),
            POINTER.withName("channel"),
            POINTER.withName("context"),
            POINTER.withName("qp"),
            RDMA_ROUTE.withName("route"),
            INT.withName("ps"),
            U8.withName("port_num"),
            POINTER.withName("event"),
            POINTER.withName("send_cq_channel"),
            POINTER.withName("send_cq"),
            POINTER.withName("recv_cq_channel"),
            POINTER.withName("recv_cq"),
            POINTER.withName("srq"),
            POINTER.withName("pd"),
            INT.withName("qp_type"));

    /** {@code struct rdma_event_channel { int fd; };} */
    public static final StructLayout RDMA_EVENT_CHANNEL = Structs.struct("rdma_event_channel", INT.withName("fd"));

    /**
     * {@code struct rdma_conn_param { const void *private_data; uint8_t private_data_len; uint8_t responder_resources;
     * uint8_t initiator_depth; uint8_t flow_control; uint8_t retry_count; uint8_t rnr_retry_count; uint8_t srq;
     * uint32_t qp_num; };}
     */
    public static final StructLayout RDMA_CONN_PARAM = Structs.struct(
            "rdma_conn_param",
            POINTER.withName("private_data"),
            U8.withName("private_data_len"),
            U8.withName("responder_resources"),
            U8.withName("initiator_depth"),
            U8.withName("flow_control"),
            U8.withName("retry_count"),
            U8.withName("rnr_retry_count"),
            U8.withName("srq"),
            U32.withName("qp_num"));

    /**
     * {@code struct rdma_ud_param { const void *private_data; uint8_t private_data_len; struct ibv_ah_attr ah_attr;
     * uint32_t qp_num; uint32_t qkey; };}
     */
    public static final StructLayout RDMA_UD_PARAM = Structs.struct(
            "rdma_ud_param",
            POINTER.withName("private_data"),
            U8.withName("private_data_len"),
            VerbsH.IBV_AH_ATTR.withName("ah_attr"),
            U32.withName("qp_num"),
            U32.withName("qkey"));

    /**
     * {@code struct rdma_cm_event { struct rdma_cm_id *id; struct rdma_cm_id *listen_id; enum rdma_cm_event_type event;
     * int status; union { struct rdma_conn_param conn; struct rdma_ud_param ud; } param; };}
     */
    public static final StructLayout RDMA_CM_EVENT = Structs.struct(
            "rdma_cm_event",
            POINTER.withName("id"),
            POINTER.withName("listen_id"),
            INT.withName("event"),
            INT.withName("status"),
            Structs.union("param", RDMA_CONN_PARAM.withName("conn"), RDMA_UD_PARAM.withName("ud")));

    public static final long CM_ID_VERBS = Structs.offset(RDMA_CM_ID, "verbs");
    public static final long CM_ID_QP = Structs.offset(RDMA_CM_ID, "qp");
    public static final long CM_ID_PORT_NUM = Structs.offset(RDMA_CM_ID, "port_num");
    public static final long CM_ID_DST_SIN = Structs.offset(RDMA_CM_ID, "route.addr.dst_sin");
    public static final long CM_ID_SRC_SIN = Structs.offset(RDMA_CM_ID, "route.addr.src_sin");
    public static final long EVENT_CHANNEL_FD = Structs.offset(RDMA_EVENT_CHANNEL, "fd");
    public static final long EVENT_ID = Structs.offset(RDMA_CM_EVENT, "id");
    public static final long EVENT_LISTEN_ID = Structs.offset(RDMA_CM_EVENT, "listen_id");
    public static final long EVENT_EVENT = Structs.offset(RDMA_CM_EVENT, "event");
    public static final long EVENT_STATUS = Structs.offset(RDMA_CM_EVENT, "status");
    public static final long EVENT_CONN_PRIVATE_DATA = Structs.offset(RDMA_CM_EVENT, "param.conn.private_data");
    public static final long EVENT_CONN_PRIVATE_DATA_LEN = Structs.offset(RDMA_CM_EVENT, "param.conn.private_data_len");
    public static final long EVENT_CONN_QP_NUM = Structs.offset(RDMA_CM_EVENT, "param.conn.qp_num");
    public static final long CONN_PRIVATE_DATA = Structs.offset(RDMA_CONN_PARAM, "private_data");
    public static final long CONN_PRIVATE_DATA_LEN = Structs.offset(RDMA_CONN_PARAM, "private_data_len");
    public static final long CONN_RESPONDER_RESOURCES = Structs.offset(RDMA_CONN_PARAM, "responder_resources");
    public static final long CONN_INITIATOR_DEPTH = Structs.offset(RDMA_CONN_PARAM, "initiator_depth");
    public static final long CONN_FLOW_CONTROL = Structs.offset(RDMA_CONN_PARAM, "flow_control");
    public static final long CONN_RETRY_COUNT = Structs.offset(RDMA_CONN_PARAM, "retry_count");
    public static final long CONN_RNR_RETRY_COUNT = Structs.offset(RDMA_CONN_PARAM, "rnr_retry_count");
    public static final long SIN_FAMILY = Structs.offset(SOCKADDR_IN, "sin_family");
    public static final long SIN_PORT = Structs.offset(SOCKADDR_IN, "sin_port");
    public static final long SIN_ADDR = Structs.offset(SOCKADDR_IN, "sin_addr.s_addr");

    public static final int AF_INET = 2;

    // ---- enum rdma_port_space
    public static final int RDMA_PS_IPOIB = 0x0002;
    public static final int RDMA_PS_TCP = 0x0106;
    public static final int RDMA_PS_UDP = 0x0111;
    public static final int RDMA_PS_IB = 0x013F;

    // ---- enum rdma_cm_event_type
    public static final int RDMA_CM_EVENT_ADDR_RESOLVED = 0;
    public static final int RDMA_CM_EVENT_ADDR_ERROR = 1;
    public static final int RDMA_CM_EVENT_ROUTE_RESOLVED = 2;
    public static final int RDMA_CM_EVENT_ROUTE_ERROR = 3;
    public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
    public static final int RDMA_CM_EVENT_CONNECT_RESPONSE = 5;
    public static final int RDMA_CM_EVENT_CONNECT_ERROR = 6;
    public static final int RDMA_CM_EVENT_UNREACHABLE = 7;
    public static final int RDMA_CM_EVENT_REJECTED = 8;
    public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
    public static final int RDMA_CM_EVENT_DISCONNECTED = 10;
    public static final int RDMA_CM_EVENT_DEVICE_REMOVAL = 11;
    public static final int RDMA_CM_EVENT_MULTICAST_JOIN = 12;
    public static final int RDMA_CM_EVENT_MULTICAST_ERROR = 13;
    public static final int RDMA_CM_EVENT_ADDR_CHANGE = 14;
    public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;
    public static final List<String> EVENT_NAMES = List.of(
            "RDMA_CM_EVENT_ADDR_RESOLVED",
            "RDMA_CM_EVENT_ADDR_ERROR",
            "RDMA_CM_EVENT_ROUTE_RESOLVED",
            "RDMA_CM_EVENT_ROUTE_ERROR",
            "RDMA_CM_EVENT_CONNECT_REQUEST",
            "RDMA_CM_EVENT_CONNECT_RESPONSE",
            "RDMA_CM_EVENT_CONNECT_ERROR",
            "RDMA_CM_EVENT_UNREACHABLE",
            "RDMA_CM_EVENT_REJECTED",
            "RDMA_CM_EVENT_ESTABLISHED",
            "RDMA_CM_EVENT_DISCONNECTED",
            "RDMA_CM_EVENT_DEVICE_REMOVAL",
            "RDMA_CM_EVENT_MULTICAST_JOIN",
            "RDMA_CM_EVENT_MULTICAST_ERROR",
            "RDMA_CM_EVENT_ADDR_CHANGE",
            "RDMA_CM_EVENT_TIMEWAIT_EXIT");

    /** Largest private data {@code rdma_connect} carries over the IB CM (REQ: 92 bytes less the 36-byte CMA header). */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;
    /** Largest private data {@code rdma_accept} carries (REP). */
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;
    /** Largest private data {@code rdma_reject} carries (REJ). */
    public static final int MAX_REJECT_PRIVATE_DATA = 148;
}
