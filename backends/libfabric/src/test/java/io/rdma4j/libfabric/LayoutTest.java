package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.ffi.CLayoutCheck;
import io.rdma4j.libfabric.ffi.FabricH;
import io.rdma4j.libfabric.ffi.FiDomainH;
import io.rdma4j.libfabric.ffi.FiEndpointH;
import io.rdma4j.libfabric.ffi.FiEqH;
import io.rdma4j.libfabric.ffi.FiErrnoH;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every struct and constant the binding declares, compared with the installed libfabric headers by gcc. */
class LayoutTest {
    @Test
    void layoutsAndConstantsMatchTheInstalledHeaders() throws Exception {
        CLayoutCheck check = new CLayoutCheck()
                .include("rdma/fabric.h")
                .include("rdma/fi_domain.h")
                .include("rdma/fi_endpoint.h")
                .include("rdma/fi_cm.h")
                .include("rdma/fi_rma.h")
                .include("rdma/fi_eq.h")
                .include("rdma/fi_errno.h")
                .include("sys/uio.h")
                .struct("struct fi_info", FabricH.FI_INFO)
                .struct("struct fi_tx_attr", FabricH.FI_TX_ATTR)
                .struct("struct fi_rx_attr", FabricH.FI_RX_ATTR)
                .struct("struct fi_ep_attr", FabricH.FI_EP_ATTR)
                .struct("struct fi_domain_attr", FabricH.FI_DOMAIN_ATTR)
                .struct("struct fi_fabric_attr", FabricH.FI_FABRIC_ATTR)
                .struct("struct fi_ops", FabricH.FI_OPS)
                .struct("struct fid", FabricH.FID)
                .struct("struct fi_ops_fabric", FabricH.FI_OPS_FABRIC)
                .struct("struct fid_fabric", FabricH.FID_FABRIC)
                .struct("struct iovec", FiDomainH.IOVEC)
                .struct("struct fi_av_attr", FiDomainH.FI_AV_ATTR)
                .struct("struct fi_ops_av", FiDomainH.FI_OPS_AV)
                .struct("struct fid_av", FiDomainH.FID_AV)
                .struct("struct fid_mr", FiDomainH.FID_MR)
                .struct("struct fi_mr_attr", FiDomainH.FI_MR_ATTR)
                .struct("struct fi_ops_domain", FiDomainH.FI_OPS_DOMAIN)
                .struct("struct fi_ops_mr", FiDomainH.FI_OPS_MR)
                .struct("struct fid_domain", FiDomainH.FID_DOMAIN)
                .struct("struct fid_ep", FiEndpointH.FID_EP)
                .struct("struct fi_ops_msg", FiEndpointH.FI_OPS_MSG)
                .struct("struct fi_ops_rma", FiEndpointH.FI_OPS_RMA)
                .struct("struct fi_ops_cm", FiEndpointH.FI_OPS_CM)
                .struct("struct fi_rma_iov", FiEndpointH.FI_RMA_IOV)
                .struct("struct fi_msg_rma", FiEndpointH.FI_MSG_RMA)
                .struct("struct fi_cq_attr", FiEqH.FI_CQ_ATTR)
                .struct("struct fi_cq_data_entry", FiEqH.FI_CQ_DATA_ENTRY)
                .struct("struct fi_cq_err_entry", FiEqH.FI_CQ_ERR_ENTRY)
                .struct("struct fi_ops_cq", FiEqH.FI_OPS_CQ)
                .struct("struct fid_cq", FiEqH.FID_CQ);
        int constants = 0;
        for (Class<?> c : List.of(FabricH.class, FiEqH.class, FiErrnoH.class)) {
            for (Field f : c.getFields()) {
                boolean constant =
                        Modifier.isStatic(f.getModifiers()) && (f.getType() == int.class || f.getType() == long.class);
                // FI_VERSION_1_17 is FI_VERSION(1, 17), a function-like macro, checked below
                if (constant && f.getName().startsWith("FI_") && !f.getName().equals("FI_VERSION_1_17")) {
                    check.constant(f.getName(), ((Number) f.get(null)).longValue());
                    constants++;
                }
            }
        }
        check.constant("FI_VERSION(1, 17)", FabricH.FI_VERSION_1_17);
        // enum fi_hmem_iface (fi_domain.h), the iface of fi_mr_regattr, and the version that brings FI_MR_DMABUF
        for (Field f : FiDomainH.class.getFields()) {
            if (f.getName().startsWith("FI_HMEM_") && f.getType() == int.class) {
                check.constant(f.getName(), f.getInt(null));
                constants++;
            }
        }
        check.constant("FI_VERSION(1, 20)", FiDomainH.FI_VERSION_1_20);
        assertEquals(List.of(), check.run());
        assertEquals(true, constants > 60, "constants checked: " + constants);
    }
}
