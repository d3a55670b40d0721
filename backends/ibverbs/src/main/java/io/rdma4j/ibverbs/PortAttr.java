package io.rdma4j.ibverbs;

/**
 * A port's state ({@code struct ibv_port_attr}).
 *
 * @param state {@code IBV_PORT_*}, 4 is ACTIVE
 * @param maxMtu {@code IBV_MTU_*}
 * @param activeMtu {@code IBV_MTU_*}
 * @param linkLayer {@code IBV_LINK_LAYER_INFINIBAND} or {@code IBV_LINK_LAYER_ETHERNET} (RoCE)
 */
public record PortAttr(
        int state,
        int maxMtu,
        int activeMtu,
        int gidTblLen,
        int portCapFlags,
        long maxMsgSz,
        int lid,
        int smLid,
        int lmc,
        int activeWidth,
        int activeSpeed,
        int physState,
        int linkLayer) {
    public boolean isActive() {
        return state == io.rdma4j.ibverbs.ffi.VerbsH.IBV_PORT_ACTIVE;
    }
}
