package io.rdma4j.ibverbs;

import io.rdma4j.ffi.OpsTable;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.MemorySegment;

/** A shared receive queue ({@code struct ibv_srq}): receive buffers shared by several queue pairs. */
public final class SharedReceiveQueue extends NativeObject {
    private final ProtectionDomain pd;
    private final int maxSge;
    private final MemorySegment postFn;

    SharedReceiveQueue(ProtectionDomain pd, MemorySegment srq, int maxSge) {
        super("SharedReceiveQueue", srq, pd);
        this.pd = pd;
        this.maxSge = maxSge;
        this.postFn = OpsTable.function(pd.context().ctx, VerbsH.OPS_POST_SRQ_RECV, "ibv_post_srq_recv");
    }

    /**
     * Posts a receive request (chain).
     *
     * <pre>
     * {@code static inline int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
     *                                     struct ibv_recv_wr **bad_recv_wr)
     * { return srq->context->ops.post_srq_recv(srq, recv_wr, bad_recv_wr); }}</pre>
     *
     * @return 0, or an errno value (ENOMEM: the queue is full)
     */
    public int postRecv(RecvWr wr) {
        ensureOpen();
        int n = 0;
        for (RecvWr w = wr; w != null; w = w.next) {
            w.validate(pd, maxSge, this);
            if (++n > 65536) {
                throw new IllegalArgumentException("receive chain is cyclic or longer than 65536 requests");
            }
        }
        try {
            return (int) LibIbverbs.POST_OP.invokeExact(postFn, handle, wr.wr, wr.badWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void destroy() {
        try {
            int rc = (int) LibIbverbs.ibv_destroy_srq.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_destroy_srq", "", rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
