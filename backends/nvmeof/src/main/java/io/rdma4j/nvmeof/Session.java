package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.rdma.RdmaResources;
import java.util.List;
import java.util.concurrent.ScheduledFuture;

/**
 * Everything one bring-up created: the connections, the controller's identity and limits, the keep-alive timer.
 * {@link Controller#reconnect()} replaces it whole; {@link BringUp} makes and ends it.
 *
 * @param polled the queue IDs reserved for polled queues
 * @param inCapsule in-capsule data bytes an I/O command may carry
 * @param depthLimit the deepest queue the controller allows (CAP.MQES, MAXCMD)
 */
record Session(
        FabricQueue admin,
        List<FabricQueue> io,
        RdmaResources rdma,
        int cntlid,
        long cap,
        int version,
        ControllerInfo info,
        long maxTransfer,
        int depth,
        ScheduledFuture<?> keepAlive,
        int asyncEventRequests,
        PolledQids polled,
        int inCapsule,
        int depthLimit) {}
