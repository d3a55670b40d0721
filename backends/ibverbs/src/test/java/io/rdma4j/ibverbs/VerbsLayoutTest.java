package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.CLayoutCheck;
import io.rdma4j.ibverbs.ffi.RdmaCmaH;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/** Every layout, offset and constant of the bindings against rdma-core's installed headers, compiled with gcc. */
class VerbsLayoutTest {
    /** Adds every public static int constant of {@code holder} whose name starts with one of the prefixes. */
    private static CLayoutCheck constants(CLayoutCheck c, Class<?> holder, String... prefixes)
            throws IllegalAccessException {
        for (Field f : holder.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                for (String p : prefixes) {
                    if (f.getName().startsWith(p)) {
                        c.constant(f.getName(), f.getInt(null));
                    }
                }
            }
        }
        return c;
    }

    @Test
    void verbsStructsMatchInfinibandVerbsH() throws Exception {
        CLayoutCheck c = new CLayoutCheck()
                .include("infiniband/verbs.h")
                .struct("union ibv_gid", VerbsH.IBV_GID)
                .struct("struct ibv_device_attr", VerbsH.IBV_DEVICE_ATTR)
                .struct("struct ibv_port_attr", VerbsH.IBV_PORT_ATTR)
                .struct("struct ibv_gid_entry", VerbsH.IBV_GID_ENTRY)
                .struct("struct ibv_sge", VerbsH.IBV_SGE)
                .struct("struct ibv_qp_cap", VerbsH.IBV_QP_CAP_STRUCT)
                .struct("struct ibv_qp_init_attr", VerbsH.IBV_QP_INIT_ATTR)
                .struct("struct ibv_global_route", VerbsH.IBV_GLOBAL_ROUTE)
                .struct("struct ibv_ah_attr", VerbsH.IBV_AH_ATTR)
                .struct("struct ibv_qp_attr", VerbsH.IBV_QP_ATTR)
                .struct("struct ibv_mw_bind_info", VerbsH.IBV_MW_BIND_INFO)
                .struct("struct ibv_send_wr", VerbsH.IBV_SEND_WR)
                .struct("struct ibv_recv_wr", VerbsH.IBV_RECV_WR)
                .struct("struct ibv_wc", VerbsH.IBV_WC)
                .struct("struct ibv_srq_attr", VerbsH.IBV_SRQ_ATTR)
                .struct("struct ibv_srq_init_attr", VerbsH.IBV_SRQ_INIT_ATTR)
                .struct("struct ibv_async_event", VerbsH.IBV_ASYNC_EVENT)
                .struct("struct ibv_mr", VerbsH.IBV_MR)
                .struct("struct ibv_qp", VerbsH.IBV_QP)
                .struct("struct ibv_cq", VerbsH.IBV_CQ)
                .struct("struct ibv_srq", VerbsH.IBV_SRQ)
                .struct("struct ibv_comp_channel", VerbsH.IBV_COMP_CHANNEL)
                .struct("struct ibv_pd", VerbsH.IBV_PD)
                .struct("struct ibv_ah", VerbsH.IBV_AH)
                .struct("struct ibv_context_ops", VerbsH.IBV_CONTEXT_OPS)
                .struct("struct ibv_context", VerbsH.IBV_CONTEXT)
                .struct("struct verbs_context", VerbsH.VERBS_CONTEXT);
        constants(
                c,
                VerbsH.class,
                "IBV_WR_",
                "IBV_SEND_",
                "IBV_WC_",
                "IBV_QP_",
                "IBV_ACCESS_",
                "IBV_MTU_",
                "IBV_QPS_",
                "IBV_QPT_",
                "IBV_PORT_",
                "IBV_GID_TYPE_",
                "IBV_LINK_LAYER_");
        for (int i = 0; i < VerbsH.WC_STATUS_NAMES.size(); i++) {
            c.constant(VerbsH.WC_STATUS_NAMES.get(i), i);
        }
        for (int i = 0; i < VerbsH.EVENT_TYPE_NAMES.size(); i++) {
            c.constant(VerbsH.EVENT_TYPE_NAMES.get(i), i);
        }
        var mismatches = c.run();
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches));
    }

    @Test
    void rdmaCmStructsMatchRdmaCmaH() throws Exception {
        CLayoutCheck c = new CLayoutCheck()
                .include("rdma/rdma_cma.h")
                .include("netinet/in.h")
                .struct("struct sockaddr", RdmaCmaH.SOCKADDR)
                .struct("struct sockaddr_in", RdmaCmaH.SOCKADDR_IN)
                .struct("struct sockaddr_in6", RdmaCmaH.SOCKADDR_IN6)
                .struct("struct sockaddr_storage", RdmaCmaH.SOCKADDR_STORAGE)
                .struct("struct rdma_ib_addr", RdmaCmaH.RDMA_IB_ADDR)
                .struct("struct rdma_addr", RdmaCmaH.RDMA_ADDR)
                .struct("struct rdma_route", RdmaCmaH.RDMA_ROUTE)
                .struct("struct rdma_cm_id", RdmaCmaH.RDMA_CM_ID)
                .struct("struct rdma_event_channel", RdmaCmaH.RDMA_EVENT_CHANNEL)
                .struct("struct rdma_conn_param", RdmaCmaH.RDMA_CONN_PARAM)
                .struct("struct rdma_ud_param", RdmaCmaH.RDMA_UD_PARAM)
                .struct("struct rdma_cm_event", RdmaCmaH.RDMA_CM_EVENT)
                .constant("AF_INET", RdmaCmaH.AF_INET);
        constants(c, RdmaCmaH.class, "RDMA_PS_", "RDMA_CM_EVENT_");
        for (int i = 0; i < RdmaCmaH.EVENT_NAMES.size(); i++) {
            c.constant(RdmaCmaH.EVENT_NAMES.get(i), i);
        }
        var mismatches = c.run();
        assertTrue(mismatches.isEmpty(), String.join("\n", mismatches));
    }
}
