package io.rdma4j.ibverbs;

import static io.rdma4j.ffi.Structs.offset;
import static io.rdma4j.ibverbs.AhAttr.check;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Attributes for {@code ibv_modify_qp} ({@code struct ibv_qp_attr}). Each setter also sets its bit of the attribute
 * mask, so {@link QueuePair#modify(QpAttr)} passes exactly what was set.
 */
public final class QpAttr {
    private static final long QP_STATE = offset(VerbsH.IBV_QP_ATTR, "qp_state");
    private static final long CUR_QP_STATE = offset(VerbsH.IBV_QP_ATTR, "cur_qp_state");
    private static final long PATH_MTU = offset(VerbsH.IBV_QP_ATTR, "path_mtu");
    private static final long QKEY = offset(VerbsH.IBV_QP_ATTR, "qkey");
    private static final long RQ_PSN = offset(VerbsH.IBV_QP_ATTR, "rq_psn");
    private static final long SQ_PSN = offset(VerbsH.IBV_QP_ATTR, "sq_psn");
    private static final long DEST_QP_NUM = offset(VerbsH.IBV_QP_ATTR, "dest_qp_num");
    private static final long ACCESS = offset(VerbsH.IBV_QP_ATTR, "qp_access_flags");
    private static final long AH_ATTR = offset(VerbsH.IBV_QP_ATTR, "ah_attr");
    private static final long PKEY_INDEX = offset(VerbsH.IBV_QP_ATTR, "pkey_index");
    private static final long MAX_RD_ATOMIC = offset(VerbsH.IBV_QP_ATTR, "max_rd_atomic");
    private static final long MAX_DEST_RD_ATOMIC = offset(VerbsH.IBV_QP_ATTR, "max_dest_rd_atomic");
    private static final long MIN_RNR_TIMER = offset(VerbsH.IBV_QP_ATTR, "min_rnr_timer");
    private static final long PORT_NUM = offset(VerbsH.IBV_QP_ATTR, "port_num");
    private static final long TIMEOUT = offset(VerbsH.IBV_QP_ATTR, "timeout");
    private static final long RETRY_CNT = offset(VerbsH.IBV_QP_ATTR, "retry_cnt");
    private static final long RNR_RETRY = offset(VerbsH.IBV_QP_ATTR, "rnr_retry");
    private static final long RATE_LIMIT = offset(VerbsH.IBV_QP_ATTR, "rate_limit");

    int mask;
    private int state;
    private int curState;
    private int pathMtu;
    private int qkey;
    private int rqPsn;
    private int sqPsn;
    private int destQpNum;
    private int accessFlags;
    private int pkeyIndex;
    private int port;
    private AhAttr ahAttr;
    private int maxRdAtomic;
    private int maxDestRdAtomic;
    private int minRnrTimer;
    private int timeout;
    private int retryCnt;
    private int rnrRetry;
    private int rateLimit;

    /** @return the mask of the attributes set ({@code IBV_QP_*} bits) */
    public int mask() {
        return mask;
    }

    /** Target state, {@code IBV_QPS_*}. */
    public QpAttr state(int s) {
        this.state = check("qp_state", s, VerbsH.IBV_QPS_ERR);
        mask |= VerbsH.IBV_QP_STATE;
        return this;
    }

    public QpAttr curState(int s) {
        this.curState = check("cur_qp_state", s, VerbsH.IBV_QPS_ERR);
        mask |= VerbsH.IBV_QP_CUR_STATE;
        return this;
    }

    /** {@code IBV_MTU_256} (1) to {@code IBV_MTU_4096} (5). */
    public QpAttr pathMtu(int mtu) {
        if (VerbsH.mtuBytes(mtu) < 0) {
            throw new IllegalArgumentException("path MTU " + mtu + " is not an IBV_MTU_* value (1=256 ... 5=4096)");
        }
        this.pathMtu = mtu;
        mask |= VerbsH.IBV_QP_PATH_MTU;
        return this;
    }

    public QpAttr qkey(int qkey) {
        this.qkey = qkey;
        mask |= VerbsH.IBV_QP_QKEY;
        return this;
    }

    public QpAttr rqPsn(int psn) {
        this.rqPsn = check("rq_psn", psn, 0xFFFFFF);
        mask |= VerbsH.IBV_QP_RQ_PSN;
        return this;
    }

    public QpAttr sqPsn(int psn) {
        this.sqPsn = check("sq_psn", psn, 0xFFFFFF);
        mask |= VerbsH.IBV_QP_SQ_PSN;
        return this;
    }

    public QpAttr destQpNum(int qpn) {
        this.destQpNum = check("dest_qp_num", qpn, 0xFFFFFF);
        mask |= VerbsH.IBV_QP_DEST_QPN;
        return this;
    }

    /** {@code IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | ...} granted to the peer. */
    public QpAttr accessFlags(int flags) {
        this.accessFlags = flags;
        mask |= VerbsH.IBV_QP_ACCESS_FLAGS;
        return this;
    }

    public QpAttr pkeyIndex(int i) {
        this.pkeyIndex = check("pkey_index", i, 0xFFFF);
        mask |= VerbsH.IBV_QP_PKEY_INDEX;
        return this;
    }

    public QpAttr port(int p) {
        this.port = check("port_num", p, 0xFF);
        mask |= VerbsH.IBV_QP_PORT;
        return this;
    }

    public QpAttr ahAttr(AhAttr ah) {
        this.ahAttr = ah;
        mask |= VerbsH.IBV_QP_AV;
        return this;
    }

    public QpAttr maxRdAtomic(int n) {
        this.maxRdAtomic = check("max_rd_atomic", n, 0xFF);
        mask |= VerbsH.IBV_QP_MAX_QP_RD_ATOMIC;
        return this;
    }

    public QpAttr maxDestRdAtomic(int n) {
        this.maxDestRdAtomic = check("max_dest_rd_atomic", n, 0xFF);
        mask |= VerbsH.IBV_QP_MAX_DEST_RD_ATOMIC;
        return this;
    }

    public QpAttr minRnrTimer(int t) {
        this.minRnrTimer = check("min_rnr_timer", t, 31);
        mask |= VerbsH.IBV_QP_MIN_RNR_TIMER;
        return this;
    }

    public QpAttr timeout(int t) {
        this.timeout = check("timeout", t, 31);
        mask |= VerbsH.IBV_QP_TIMEOUT;
        return this;
    }

    public QpAttr retryCnt(int n) {
        this.retryCnt = check("retry_cnt", n, 7);
        mask |= VerbsH.IBV_QP_RETRY_CNT;
        return this;
    }

    public QpAttr rnrRetry(int n) {
        this.rnrRetry = check("rnr_retry", n, 7);
        mask |= VerbsH.IBV_QP_RNR_RETRY;
        return this;
    }

    public QpAttr rateLimit(int kbps) {
        this.rateLimit = kbps;
        mask |= VerbsH.IBV_QP_RATE_LIMIT;
        return this;
    }

    public int state() {
        return state;
    }

    public int pathMtu() {
        return pathMtu;
    }

    public int destQpNum() {
        return destQpNum;
    }

    public int rqPsn() {
        return rqPsn;
    }

    public int sqPsn() {
        return sqPsn;
    }

    public int qkey() {
        return qkey;
    }

    public int port() {
        return port;
    }

    public int accessFlags() {
        return accessFlags;
    }

    public AhAttr ahAttr() {
        return ahAttr;
    }

    void write(MemorySegment s) {
        s.set(ValueLayout.JAVA_INT, QP_STATE, state);
        s.set(ValueLayout.JAVA_INT, CUR_QP_STATE, curState);
        s.set(ValueLayout.JAVA_INT, PATH_MTU, pathMtu);
        s.set(ValueLayout.JAVA_INT, QKEY, qkey);
        s.set(ValueLayout.JAVA_INT, RQ_PSN, rqPsn);
        s.set(ValueLayout.JAVA_INT, SQ_PSN, sqPsn);
        s.set(ValueLayout.JAVA_INT, DEST_QP_NUM, destQpNum);
        s.set(ValueLayout.JAVA_INT, ACCESS, accessFlags);
        if (ahAttr != null) {
            ahAttr.write(s, AH_ATTR);
        }
        s.set(ValueLayout.JAVA_SHORT, PKEY_INDEX, (short) pkeyIndex);
        s.set(ValueLayout.JAVA_BYTE, MAX_RD_ATOMIC, (byte) maxRdAtomic);
        s.set(ValueLayout.JAVA_BYTE, MAX_DEST_RD_ATOMIC, (byte) maxDestRdAtomic);
        s.set(ValueLayout.JAVA_BYTE, MIN_RNR_TIMER, (byte) minRnrTimer);
        s.set(ValueLayout.JAVA_BYTE, PORT_NUM, (byte) port);
        s.set(ValueLayout.JAVA_BYTE, TIMEOUT, (byte) timeout);
        s.set(ValueLayout.JAVA_BYTE, RETRY_CNT, (byte) retryCnt);
        s.set(ValueLayout.JAVA_BYTE, RNR_RETRY, (byte) rnrRetry);
        s.set(ValueLayout.JAVA_INT, RATE_LIMIT, rateLimit);
    }

    static QpAttr read(MemorySegment s, int mask) {
        QpAttr a = new QpAttr();
        a.mask = mask;
        a.state = s.get(ValueLayout.JAVA_INT, QP_STATE);
        a.curState = s.get(ValueLayout.JAVA_INT, CUR_QP_STATE);
        a.pathMtu = s.get(ValueLayout.JAVA_INT, PATH_MTU);
        a.qkey = s.get(ValueLayout.JAVA_INT, QKEY);
        a.rqPsn = s.get(ValueLayout.JAVA_INT, RQ_PSN);
        a.sqPsn = s.get(ValueLayout.JAVA_INT, SQ_PSN);
        a.destQpNum = s.get(ValueLayout.JAVA_INT, DEST_QP_NUM);
        a.accessFlags = s.get(ValueLayout.JAVA_INT, ACCESS);
        a.ahAttr = AhAttr.read(s, AH_ATTR);
        a.pkeyIndex = Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT, PKEY_INDEX));
        a.maxRdAtomic = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, MAX_RD_ATOMIC));
        a.maxDestRdAtomic = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, MAX_DEST_RD_ATOMIC));
        a.minRnrTimer = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, MIN_RNR_TIMER));
        a.port = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, PORT_NUM));
        a.timeout = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, TIMEOUT));
        a.retryCnt = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, RETRY_CNT));
        a.rnrRetry = Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, RNR_RETRY));
        return a;
    }

    @Override
    public String toString() {
        return "qp_attr{mask=0x" + Integer.toHexString(mask)
                + ((mask & VerbsH.IBV_QP_STATE) != 0 ? ", state=" + VerbsH.QP_STATE_NAMES.get(state) : "") + "}";
    }
}
