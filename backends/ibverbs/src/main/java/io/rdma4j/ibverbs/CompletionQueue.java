package io.rdma4j.ibverbs;

import io.rdma4j.ffi.OpsTable;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A completion queue ({@code struct ibv_cq}). {@link #poll} and {@link #requestNotify} are the {@code static inline}
 * verbs, called through the provider's ops table with handles bound once; neither allocates.
 */
public final class CompletionQueue extends NativeObject {
    private final Context context;
    private final CompletionChannel channel;
    private final MemorySegment pollFn;
    private final MemorySegment notifyFn;
    private final AtomicInteger unacked = new AtomicInteger();

    CompletionQueue(Context context, CompletionChannel channel, MemorySegment cq) {
        super("CompletionQueue", cq, context, channel);
        this.context = context;
        this.channel = channel;
        this.pollFn = OpsTable.function(context.ctx, VerbsH.OPS_POLL_CQ, "ibv_poll_cq");
        this.notifyFn = OpsTable.function(context.ctx, VerbsH.OPS_REQ_NOTIFY_CQ, "ibv_req_notify_cq");
        if (channel != null) {
            channel.register(this);
        }
    }

    public Context context() {
        ensureOpen();
        return context;
    }

    /**
     * Polls up to {@code wcs.capacity()} completions into {@code wcs}.
     *
     * <pre>{@code static inline int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
     * { return cq->context->ops.poll_cq(cq, num_entries, wc); }}</pre>
     *
     * @return the number of completions (0 when none), or a negative value when polling failed
     */
    public int poll(WorkCompletions wcs) {
        ensureOpen();
        return poll(wcs, wcs.capacity());
    }

    /** Polls at most {@code max} completions (at most the capacity of {@code wcs}). */
    public int poll(WorkCompletions wcs, int max) {
        ensureOpen();
        wcs.ensureUsable();
        if (max < 1 || max > wcs.capacity()) {
            throw new IllegalArgumentException(
                    "can poll 1 to " + wcs.capacity() + " completions into this buffer, asked for " + max);
        }
        try {
            int n = (int) LibIbverbs.POLL_CQ_OP.invokeExact(pollFn, handle, max, wcs.segment);
            wcs.count = Math.max(n, 0);
            return n;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Arms the CQ to raise one event on its completion channel at the next completion.
     *
     * <pre>{@code static inline int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
     * { return cq->context->ops.req_notify_cq(cq, solicited_only); }}</pre>
     *
     * @return 0, or an errno value
     */
    public int requestNotify(boolean solicitedOnly) {
        ensureOpen();
        if (channel == null) {
            throw new IllegalStateException(
                    what + " has no completion channel: create it with Context.createCq(cqe, channel, vector)");
        }
        try {
            return (int) LibIbverbs.REQ_NOTIFY_CQ_OP.invokeExact(notifyFn, handle, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    // Called by the channel for an event it handed out unacknowledged.
    void eventTaken() {
        unacked.incrementAndGet();
    }

    /**
     * Acknowledges the events {@link CompletionChannel#getEvent} took for this CQ so far ({@code ibv_ack_cq_events}),
     * one call for all of them.
     *
     * @return how many were acknowledged
     */
    public int ackEvents() {
        ensureOpen();
        return ackPending();
    }

    private int ackPending() {
        int n = unacked.getAndSet(0);
        if (n > 0) {
            try {
                LibIbverbs.ibv_ack_cq_events.handle().invokeExact(handle, n);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
        return n;
    }

    @Override
    void destroy() {
        if (channel != null) {
            channel.unregister(this);
            ackPending(); // ibv_destroy_cq waits until every event taken is acknowledged
        }
        try {
            int rc = (int) LibIbverbs.ibv_destroy_cq.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_destroy_cq", "", rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
