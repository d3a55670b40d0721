package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.VerbsH;

/**
 * An asynchronous event of a device ({@code struct ibv_async_event}), already acknowledged.
 *
 * @param eventType {@code IBV_EVENT_*}
 * @param element the address of the CQ, QP or SRQ the event is about, or the port number for port events
 */
public record AsyncEvent(int eventType, long element) {
    /** @return the C name, e.g. {@code IBV_EVENT_QP_FATAL} */
    public String name() {
        return eventType >= 0 && eventType < VerbsH.EVENT_TYPE_NAMES.size()
                ? VerbsH.EVENT_TYPE_NAMES.get(eventType)
                : "IBV_EVENT_" + eventType;
    }
}
