package io.rdma4j.ibverbs;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_INIT;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RESET;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RTR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RTS;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPT_RC;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPT_UC;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPT_UD;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_ATTR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_INIT_ATTR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_STATE;
import static io.rdma4j.ibverbs.ffi.VerbsH.OPS_POST_RECV;
import static io.rdma4j.ibverbs.ffi.VerbsH.OPS_POST_SEND;
import static io.rdma4j.ibverbs.ffi.VerbsH.QP_QP_NUM;
import static io.rdma4j.ibverbs.ffi.VerbsH.QP_STATE_NAMES;

import io.rdma4j.ffi.OpsTable;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A queue pair ({@code struct ibv_qp}), RC or UD. The state is tracked in Java from the transitions made through
 * {@link #modify}; posting checks it (sends need RTS, receives anything but RESET) before any native call.
 * {@link #postSend} and {@link #postRecv} are the {@code static inline} verbs called through the provider's ops table.
 */
public final class QueuePair extends NativeObject {
    private final ProtectionDomain pd;
    private final int type;
    private final int qpNum;
    private final int localPsn;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final int maxSendSge;
    private final int maxRecvSge;
    private final int maxInlineData;
    private final SharedReceiveQueue srq;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final Runnable destroyer;
    private volatile int state = IBV_QPS_RESET;

    QueuePair(ProtectionDomain pd, MemorySegment qp, QpInitAttr init, int[] cap, Runnable destroyer) {
        super("QueuePair", qp, pd, init.sendCq, init.recvCq, init.srq);
        this.pd = pd;
        this.type = init.qpType;
        this.qpNum = qp.reinterpret(IBV_QP.byteSize()).get(ValueLayout.JAVA_INT, QP_QP_NUM);
        this.localPsn = ThreadLocalRandom.current().nextInt(1 << 24);
        this.maxSendWr = cap[0];
        this.maxRecvWr = cap[1];
        this.maxSendSge = cap[2];
        this.maxRecvSge = cap[3];
        this.maxInlineData = cap[4];
        this.srq = init.srq;
        this.postSendFn = OpsTable.function(pd.context().ctx, OPS_POST_SEND, "ibv_post_send");
        this.postRecvFn = OpsTable.function(pd.context().ctx, OPS_POST_RECV, "ibv_post_recv");
        this.destroyer = destroyer;
    }

    /**
     * Wraps a queue pair that librdmacm created on a CM id ({@code rdma_create_qp}); closing it calls
     * {@code destroyer}.
     */
    static QueuePair ofCm(ProtectionDomain pd, MemorySegment qp, QpInitAttr init, int[] cap, Runnable destroyer) {
        QueuePair q = new QueuePair(pd, qp, init, cap, destroyer);
        q.refreshState();
        return q;
    }

    public ProtectionDomain pd() {
        ensureOpen();
        return pd;
    }

    public Context context() {
        ensureOpen();
        return pd.context();
    }

    public int qpNum() {
        ensureOpen();
        return qpNum;
    }

    /** @return {@code IBV_QPT_RC} or {@code IBV_QPT_UD} (or UC) */
    public int type() {
        ensureOpen();
        return type;
    }

    String typeName() {
        return type == IBV_QPT_RC
                ? "RC"
                : type == IBV_QPT_UD ? "UD" : type == IBV_QPT_UC ? "UC" : Integer.toString(type);
    }

    /** @return the starting send PSN this side uses, a random 24-bit value chosen at creation */
    public int localPsn() {
        ensureOpen();
        return localPsn;
    }

    /** @return the state as of the last transition made through this object or {@link #refreshState()} */
    public int state() {
        ensureOpen();
        return state;
    }

    public String stateName() {
        ensureOpen();
        return QP_STATE_NAMES.get(state);
    }

    public int maxSendWr() {
        ensureOpen();
        return maxSendWr;
    }

    public int maxRecvWr() {
        ensureOpen();
        return maxRecvWr;
    }

    public int maxSendSge() {
        ensureOpen();
        return maxSendSge;
    }

    public int maxRecvSge() {
        ensureOpen();
        return maxRecvSge;
    }

    public int maxInlineData() {
        ensureOpen();
        return maxInlineData;
    }

    /** {@code ibv_modify_qp} with the attributes set on {@code attr} and exactly their mask bits. */
    public void modify(QpAttr attr) {
        ensureOpen();
        if (attr.mask == 0) {
            throw new IllegalArgumentException("no attribute set: nothing to modify");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(IBV_QP_ATTR);
            attr.write(s);
            int rc = (int) LibIbverbs.ibv_modify_qp.handle().invokeExact(handle, s, attr.mask);
            if (rc != 0) {
                throw new VerbsException("ibv_modify_qp", "qp_num=" + qpNum + ", " + stateName() + " -> " + attr, rc);
            }
            if ((attr.mask & IBV_QP_STATE) != 0) {
                state = attr.state();
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_query_qp} for the attributes in {@code mask}; also refreshes {@link #state()}. */
    public QpAttr query(int mask) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(IBV_QP_ATTR);
            MemorySegment init = a.allocate(IBV_QP_INIT_ATTR);
            int rc = (int) LibIbverbs.ibv_query_qp.handle().invokeExact(handle, s, mask | IBV_QP_STATE, init);
            if (rc != 0) {
                throw new VerbsException("ibv_query_qp", "qp_num=" + qpNum, rc);
            }
            QpAttr q = QpAttr.read(s, mask | IBV_QP_STATE);
            state = q.state();
            return q;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Reads the state from the device (after an asynchronous error, or a transition made by librdmacm). */
    public int refreshState() {
        ensureOpen();
        return query(IBV_QP_STATE).state();
    }

    /**
     * Takes a UD queue pair to RTS: INIT (pkey 0, {@code port}, {@code qkey}), RTR, RTS (sq_psn = {@link #localPsn()}).
     */
    public void activateUd(int port, int qkey) {
        ensureOpen();
        if (type != IBV_QPT_UD) {
            throw new IllegalStateException("activateUd needs a UD queue pair; " + this + " is " + typeName());
        }
        modify(new QpAttr().state(IBV_QPS_INIT).pkeyIndex(0).port(port).qkey(qkey));
        modify(new QpAttr().state(IBV_QPS_RTR));
        modify(new QpAttr().state(IBV_QPS_RTS).sqPsn(localPsn));
    }

    /**
     * Posts a send request (or chain) after checking, in Java, the queue pair's state, every SGE's region and bounds,
     * and that the opcode fits the queue pair type.
     *
     * <pre>
     * {@code static inline int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
     * { return qp->context->ops.post_send(qp, wr, bad_wr); }}</pre>
     *
     * @return 0, or an errno value from the provider (ENOMEM: the send queue is full)
     * @throws IllegalStateException when the queue pair is not in RTS
     */
    public int postSend(SendWr wr) {
        ensureOpen();
        int s = state;
        if (s != IBV_QPS_RTS) {
            throw new IllegalStateException("cannot post a send on " + this + " in state " + QP_STATE_NAMES.get(s)
                    + ": connect it first (Verbs.connectRc, activateUd) so it reaches RTS");
        }
        int n = 0;
        for (SendWr w = wr; w != null; w = w.next) {
            w.validate(this);
            if (++n > maxSendWr) {
                throw new IllegalArgumentException(
                        "send chain is cyclic or longer than the send queue (" + maxSendWr + ")");
            }
        }
        try {
            return (int) LibIbverbs.POST_OP.invokeExact(postSendFn, handle, wr.wr, wr.badWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Posts a receive request (or chain).
     *
     * <pre>
     * {@code static inline int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
     * { return qp->context->ops.post_recv(qp, wr, bad_wr); }}</pre>
     *
     * @return 0, or an errno value (ENOMEM: the receive queue is full)
     */
    public int postRecv(RecvWr wr) {
        ensureOpen();
        if (srq != null) {
            throw new IllegalStateException(
                    this + " receives through a shared receive queue: post to the SharedReceiveQueue");
        }
        if (state == IBV_QPS_RESET) {
            throw new IllegalStateException(
                    "cannot post a receive on " + this + " in state RESET: move it to INIT first");
        }
        int n = 0;
        for (RecvWr w = wr; w != null; w = w.next) {
            w.validate(pd, maxRecvSge, this);
            if (++n > maxRecvWr) {
                throw new IllegalArgumentException(
                        "receive chain is cyclic or longer than the receive queue (" + maxRecvWr + ")");
            }
        }
        try {
            return (int) LibIbverbs.POST_OP.invokeExact(postRecvFn, handle, wr.wr, wr.badWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void destroy() {
        if (destroyer != null) {
            destroyer.run();
            return;
        }
        try {
            int rc = (int) LibIbverbs.ibv_destroy_qp.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_destroy_qp", "qp_num=" + qpNum, rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    public String toString() {
        return typeName() + " QueuePair " + qpNum + (isClosed() ? " (closed)" : "");
    }
}
