package io.rdma4j.ibverbs.cm;

import io.rdma4j.ibverbs.ffi.RdmaCmaH;

/**
 * One RDMA-CM event ({@code struct rdma_cm_event}), copied out and already acknowledged.
 *
 * @param type {@code RDMA_CM_EVENT_*}
 * @param status 0, a negative errno, or a transport reason (reject reason for REJECTED)
 * @param id the id the event is about; for CONNECT_REQUEST a new id, owned by the caller, to accept or reject
 * @param listenId the listening id for CONNECT_REQUEST, else null
 * @param privateData the peer's private data (CONNECT_REQUEST, ESTABLISHED, REJECTED); may be padded by the transport
 * @param qpNum the peer's QP number when the event carries it
 */
public record CmEvent(int type, int status, CmId id, CmId listenId, byte[] privateData, int qpNum) {
    public CmEvent {
        privateData = privateData.clone();
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /** @return the C name, e.g. {@code RDMA_CM_EVENT_ESTABLISHED} */
    public String name() {
        return name(type);
    }

    static String name(int type) {
        return type >= 0 && type < RdmaCmaH.EVENT_NAMES.size()
                ? RdmaCmaH.EVENT_NAMES.get(type)
                : "RDMA_CM_EVENT_" + type;
    }

    @Override
    public String toString() {
        return name() + (status != 0 ? " (status " + status + ")" : "");
    }
}
