package io.rdma4j.ibverbs.engine;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_ERR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_INIT;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RESET;

import io.rdma4j.Closeables;
import io.rdma4j.ibverbs.CompletionChannel;
import io.rdma4j.ibverbs.CompletionQueue;
import io.rdma4j.ibverbs.QpAttr;
import io.rdma4j.ibverbs.QpInfo;
import io.rdma4j.ibverbs.QpInitAttr;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.RecvWr;
import io.rdma4j.ibverbs.Verbs;
import io.rdma4j.ibverbs.VerbsException;

/**
 * One lane's set-up and control: its completion queue, its sizes, and its queue pairs from creation (prepare, connect)
 * through recovery to removal. The data path ({@link SendPath}, {@link CompletionPath}) reads this state; nothing here
 * calls into it.
 *
 * <p>Control calls that touch a queue pair run under this lane's lock, and so does the progress thread when it rebuilds
 * queue pairs ({@link #rebuild}) or destroys a disconnected one ({@link #destroy}): a control call never meets a
 * destroyed queue pair.
 */
final class Lane {
    static final long RECV_TAG = 1L << 62;

    final int index;
    final VerbsDevice device;
    /** Where the completion queue announces a completion once armed: an idle progress thread sleeps on it. */
    final CompletionChannel channel;

    final CompletionQueue cq;
    final int sqDepth;
    /** Every this many send requests one is signaled. */
    final int signalEvery;

    final int recvDepth;
    final long maxMessage;
    final ConnectionTable connections = new ConnectionTable();
    /** Why the lane failed, null while healthy; written by the lane's progress thread, read by anyone. */
    volatile String error;
    /** For posting receives from control calls, under this lane's lock. */
    private final RecvWr controlRecv = new RecvWr(1);

    Lane(int index, VerbsDevice device, int queueDepth) {
        this.index = index;
        this.device = device;
        this.sqDepth = device.queueDepth(queueDepth);
        this.signalEvery = Math.max(1, sqDepth / 4);
        this.recvDepth = device.queueDepth(queueDepth);
        this.maxMessage = Math.min(0xFFFF_FFFFL, Math.max(1, device.port.maxMsgSz()));
        CompletionChannel ch = null;
        try {
            ch = device.ctx.createCompletionChannel();
            this.cq = device.ctx.createCq(
                    Math.min(device.ctx.deviceAttr().maxCqe(), 4 * (sqDepth + recvDepth) * 8), ch, 0);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, ch, controlRecv);
        }
        this.channel = ch;
    }

    /** Creates a queue pair in INIT with its receives posted, publishes it and returns its connection index. */
    synchronized int prepare() {
        QueuePair qp = device.pd.createQp(QpInitAttr.rc(cq)
                .maxSendWr(sqDepth)
                .maxRecvWr(recvDepth)
                .maxSendSge(1)
                .maxRecvSge(1));
        Connection c = new Connection(connections.nextIndex(), qp, qp.maxSendWr());
        try {
            qp.modify(new QpAttr()
                    .state(IBV_QPS_INIT)
                    .pkeyIndex(0)
                    .port(VerbsDevice.PORT)
                    .accessFlags(RegistrationTable.ACCESS));
            postRecvs(c, recvDepth, controlRecv);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, qp);
        }
        connections.add(c); // published ready: the progress thread never sees a half-made connection
        return c.index;
    }

    synchronized byte[] endpointInfo(int connection) {
        return Verbs.localQpInfo(published(connection).qp, VerbsDevice.PORT, device.gidIndex)
                .encode();
    }

    synchronized void connect(int connection, QpInfo remote) {
        Connection c = published(connection);
        Verbs.connectRc(c.qp, remote, VerbsDevice.PORT, device.gidIndex, RegistrationTable.ACCESS);
        c.remote = remote;
    }

    /** Unpublishes the connection; its queue pair lives on until the progress thread destroys it. */
    synchronized void disconnect(int connection) {
        connections.remove(connection);
    }

    private Connection published(int connection) {
        Connection c = connections.find(connection);
        if (c == null) {
            throw new IllegalArgumentException("lane " + index + " has no connection " + connection);
        }
        return c;
    }

    /** Posts {@code n} receives (no scatter entries: they only catch immediate data) on {@code c}. */
    void postRecvs(Connection c, int n, RecvWr rwr) {
        rwr.wrId(RECV_TAG | c.index).numSge(0);
        for (int i = 0; i < n; i++) {
            int rc = c.qp.postRecv(rwr);
            if (rc != 0) {
                throw new VerbsException("ibv_post_recv", "lane " + index, rc);
            }
        }
    }

    /**
     * On the progress thread, after the completion queue was drained: takes every failed queue pair through RESET,
     * INIT, RTR and RTS towards the same peer (which recovers its side likewise).
     *
     * @return whether the lane is usable again
     */
    synchronized boolean rebuild() {
        try {
            for (Connection c : connections.snapshot()) {
                if (c == null) {
                    continue;
                }
                if (c.failed || c.qp.refreshState() == IBV_QPS_ERR) {
                    c.qp.modify(new QpAttr().state(IBV_QPS_RESET));
                    c.qp.modify(new QpAttr()
                            .state(IBV_QPS_INIT)
                            .pkeyIndex(0)
                            .port(VerbsDevice.PORT)
                            .accessFlags(RegistrationTable.ACCESS));
                    postRecvs(c, recvDepth, controlRecv);
                    if (c.remote != null) {
                        Verbs.connectRc(c.qp, c.remote, VerbsDevice.PORT, device.gidIndex, RegistrationTable.ACCESS);
                    }
                    c.doneUpTo = c.head; // what is not reported yet was failed before and drains as errors
                    c.signaledPending = 0;
                    c.lastSignaled = c.head - 1;
                    c.failed = false;
                }
            }
            error = null;
            return true;
        } catch (RuntimeException e) {
            error = "lane " + index + " could not be rebuilt: " + e.getMessage();
            return false;
        }
    }

    /** On the progress thread: destroys the queue pair of a connection it took from {@link ConnectionTable}. */
    synchronized void destroy(Connection retired) {
        retired.qp.close();
    }

    /**
     * Once no progress thread runs: destroys every queue pair, the completion queue, its channel and the control
     * buffers.
     */
    void close() {
        Connection[] all = connections.removeAll();
        AutoCloseable[] order = new AutoCloseable[all.length + 3];
        for (int i = 0; i < all.length; i++) {
            order[i] = all[i] == null ? null : all[i].qp;
        }
        order[all.length] = controlRecv;
        order[all.length + 1] = cq;
        order[all.length + 2] = channel;
        Closeables.closeAll(order);
    }
}
