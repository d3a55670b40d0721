package io.rdma4j.ibverbs;

import static io.rdma4j.ffi.Structs.offset;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** What {@code ibv_create_qp} takes ({@code struct ibv_qp_init_attr}). */
public final class QpInitAttr {
    static final long SEND_CQ = offset(VerbsH.IBV_QP_INIT_ATTR, "send_cq");
    static final long RECV_CQ = offset(VerbsH.IBV_QP_INIT_ATTR, "recv_cq");
    static final long SRQ = offset(VerbsH.IBV_QP_INIT_ATTR, "srq");
    static final long CAP = offset(VerbsH.IBV_QP_INIT_ATTR, "cap");
    static final long QP_TYPE = offset(VerbsH.IBV_QP_INIT_ATTR, "qp_type");
    static final long SQ_SIG_ALL = offset(VerbsH.IBV_QP_INIT_ATTR, "sq_sig_all");

    int qpType = VerbsH.IBV_QPT_RC;
    CompletionQueue sendCq;
    CompletionQueue recvCq;
    SharedReceiveQueue srq;
    int maxSendWr = 64;
    int maxRecvWr = 64;
    int maxSendSge = 1;
    int maxRecvSge = 1;
    int maxInlineData;
    boolean sqSigAll;

    /** An RC queue pair using {@code cq} for sends and receives. */
    public static QpInitAttr rc(CompletionQueue cq) {
        return new QpInitAttr().type(VerbsH.IBV_QPT_RC).sendCq(cq).recvCq(cq);
    }

    /** A UD queue pair using {@code cq} for sends and receives. */
    public static QpInitAttr ud(CompletionQueue cq) {
        return new QpInitAttr().type(VerbsH.IBV_QPT_UD).sendCq(cq).recvCq(cq);
    }

    /** {@code IBV_QPT_RC}, {@code IBV_QPT_UC} or {@code IBV_QPT_UD}. */
    public QpInitAttr type(int qpType) {
        if (qpType != VerbsH.IBV_QPT_RC && qpType != VerbsH.IBV_QPT_UC && qpType != VerbsH.IBV_QPT_UD) {
            throw new IllegalArgumentException("queue pair type " + qpType
                    + " is not supported: use IBV_QPT_RC (2), IBV_QPT_UC (3) or IBV_QPT_UD (4)");
        }
        this.qpType = qpType;
        return this;
    }

    public QpInitAttr sendCq(CompletionQueue cq) {
        this.sendCq = cq;
        return this;
    }

    public QpInitAttr recvCq(CompletionQueue cq) {
        this.recvCq = cq;
        return this;
    }

    public QpInitAttr srq(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    public QpInitAttr maxSendWr(int n) {
        this.maxSendWr = positive("max_send_wr", n);
        return this;
    }

    public QpInitAttr maxRecvWr(int n) {
        this.maxRecvWr = positive("max_recv_wr", n);
        return this;
    }

    public QpInitAttr maxSendSge(int n) {
        this.maxSendSge = positive("max_send_sge", n);
        return this;
    }

    public QpInitAttr maxRecvSge(int n) {
        this.maxRecvSge = positive("max_recv_sge", n);
        return this;
    }

    public QpInitAttr maxInlineData(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("max_inline_data must not be negative, got " + n);
        }
        this.maxInlineData = n;
        return this;
    }

    /** Signal every send request (otherwise only those posted with {@code IBV_SEND_SIGNALED}). */
    public QpInitAttr sqSigAll(boolean all) {
        this.sqSigAll = all;
        return this;
    }

    private static int positive(String name, int n) {
        if (n < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, got " + n);
        }
        return n;
    }

    void validate(Context ctx) {
        if (sendCq == null || recvCq == null) {
            throw new IllegalArgumentException("a queue pair needs a send and a receive completion queue");
        }
        sendCq.ensureOpen();
        recvCq.ensureOpen();
        if (srq != null) {
            srq.ensureOpen();
        }
        if (ctx != null && (sendCq.context() != ctx || recvCq.context() != ctx)) {
            throw new IllegalArgumentException(
                    "the completion queues belong to another device context than the protection domain");
        }
    }

    MemorySegment write(Arena a) {
        MemorySegment s = a.allocate(VerbsH.IBV_QP_INIT_ATTR);
        s.set(ValueLayout.ADDRESS, SEND_CQ, sendCq.handle);
        s.set(ValueLayout.ADDRESS, RECV_CQ, recvCq.handle);
        s.set(ValueLayout.ADDRESS, SRQ, srq == null ? MemorySegment.NULL : srq.handle);
        s.set(ValueLayout.JAVA_INT, CAP, maxSendWr);
        s.set(ValueLayout.JAVA_INT, CAP + 4, srq == null ? maxRecvWr : 0);
        s.set(ValueLayout.JAVA_INT, CAP + 8, maxSendSge);
        s.set(ValueLayout.JAVA_INT, CAP + 12, srq == null ? maxRecvSge : 0);
        s.set(ValueLayout.JAVA_INT, CAP + 16, maxInlineData);
        s.set(ValueLayout.JAVA_INT, QP_TYPE, qpType);
        s.set(ValueLayout.JAVA_INT, SQ_SIG_ALL, sqSigAll ? 1 : 0);
        return s;
    }

    /** The capabilities the provider granted, written back into {@code cap} by ibv_create_qp. */
    static int[] readCap(MemorySegment s) {
        return new int[] {
            s.get(ValueLayout.JAVA_INT, CAP),
            s.get(ValueLayout.JAVA_INT, CAP + 4),
            s.get(ValueLayout.JAVA_INT, CAP + 8),
            s.get(ValueLayout.JAVA_INT, CAP + 12),
            s.get(ValueLayout.JAVA_INT, CAP + 16)
        };
    }

    @Override
    public String toString() {
        return "type=" + qpType + ", max_send_wr=" + maxSendWr + ", max_recv_wr=" + maxRecvWr + ", max_send_sge="
                + maxSendSge + ", max_recv_sge=" + maxRecvSge + ", max_inline_data=" + maxInlineData;
    }
}
