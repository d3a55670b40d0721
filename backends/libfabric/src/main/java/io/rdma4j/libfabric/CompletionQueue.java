package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_OPS;
import static io.rdma4j.libfabric.ffi.FabricH.FID_OPS;
import static io.rdma4j.libfabric.ffi.FabricH.FI_GETWAIT;
import static io.rdma4j.libfabric.ffi.FabricH.OPS_CONTROL;
import static io.rdma4j.libfabric.ffi.FabricH.OPS_FABRIC_TRYWAIT;
import static io.rdma4j.libfabric.ffi.FiEqH.CQ_OPS;
import static io.rdma4j.libfabric.ffi.FiEqH.ERR_ERR;
import static io.rdma4j.libfabric.ffi.FiEqH.ERR_ERR_DATA;
import static io.rdma4j.libfabric.ffi.FiEqH.ERR_FLAGS;
import static io.rdma4j.libfabric.ffi.FiEqH.ERR_OP_CONTEXT;
import static io.rdma4j.libfabric.ffi.FiEqH.ERR_PROV_ERRNO;
import static io.rdma4j.libfabric.ffi.FiEqH.FI_CQ_ERR_ENTRY;
import static io.rdma4j.libfabric.ffi.FiEqH.OPS_CQ_READ;
import static io.rdma4j.libfabric.ffi.FiEqH.OPS_CQ_READERR;
import static io.rdma4j.libfabric.ffi.FiEqH.OPS_CQ_STRERROR;

import io.rdma4j.ffi.Structs;
import io.rdma4j.libfabric.ffi.Fi;
import io.rdma4j.libfabric.ffi.FiErrnoH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A completion queue ({@code fi_cq_open}, {@code FI_CQ_FORMAT_DATA}). With manual progress, reading it is also what
 * moves data for the endpoints bound to it, on both sides of a transfer: poll it while operations are in flight.
 */
public final class CompletionQueue extends FabricResource {
    private final Domain domain;
    private final long cq;
    private final MemorySegment readFn;
    final Set<Endpoint> bound = ConcurrentHashMap.newKeySet();
    /** FI_CONTEXT slot pools of bound endpoints, whose completions carry slot addresses to translate back. */
    private volatile ContextPool[] pools = new ContextPool[0];

    /** The wait object's file descriptor ({@code FI_WAIT_FD} queues), -1 for a queue without one. */
    private final int waitFd;
    /** {@code struct fid *fids[1]} holding this queue, for {@code fi_trywait}. */
    private final MemorySegment tryWaitFids;

    private final MemorySegment tryWaitFn;

    CompletionQueue(Domain domain, long fid, boolean waitFd) {
        super("completion queue", domain);
        this.domain = domain;
        this.cq = fid;
        this.readFn = Fi.op(fid + CQ_OPS, OPS_CQ_READ, "fi_cq_read");
        opened(fid);
        if (waitFd) {
            int fd;
            try {
                fd = waitObjectFd(fid);
            } catch (RuntimeException e) {
                close(); // the queue is open: not left behind for the domain's close
                throw e;
            }
            this.waitFd = fd;
            this.tryWaitFids = Arena.ofAuto().allocate(ValueLayout.JAVA_LONG);
            tryWaitFids.set(ValueLayout.JAVA_LONG, 0, fid);
            long fabric = domain.fabric().fid();
            this.tryWaitFn = Fi.op(fabric + FABRIC_OPS, OPS_FABRIC_TRYWAIT, "fi_trywait");
        } else {
            this.waitFd = -1;
            this.tryWaitFids = null;
            this.tryWaitFn = null;
        }
    }

    /** {@code fi_control(&cq->fid, FI_GETWAIT, &fd)}: the descriptor of an {@code FI_WAIT_FD} queue. */
    private static int waitObjectFd(long fid) {
        MemorySegment control = Fi.op(fid + FID_OPS, OPS_CONTROL, "fi_control");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fd = arena.allocate(ValueLayout.JAVA_INT);
            fd.set(ValueLayout.JAVA_INT, 0, -1);
            int rc = (int) Fi.CONTROL.invokeExact(control, fid, FI_GETWAIT, fd.address());
            if (rc != 0) {
                throw FabricException.of("fi_control", "FI_GETWAIT", rc, null);
            }
            return fd.get(ValueLayout.JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Whether the queue was opened with an fd wait object ({@link Domain#openCompletionQueue(int, boolean)}). */
    public boolean hasWaitFd() {
        return waitFd >= 0;
    }

    /**
     * The file descriptor that turns readable when this queue's endpoints may have work (a completion, or on the tcp
     * provider a peer's incoming bytes to progress); block on it only after {@link #tryWait()} said so.
     *
     * @throws IllegalStateException for a queue opened without a wait object
     */
    public int waitFd() {
        if (waitFd < 0) {
            throw new IllegalStateException("completion queue has no wait object: open it with waitFd true");
        }
        return waitFd;
    }

    /**
     * {@code fi_trywait(fabric, &cq, 1)}: whether it is safe now to block on {@link #waitFd()}. False means the queue
     * may already hold work the descriptor will not announce: read it again first.
     */
    public boolean tryWait() {
        long f = fid();
        if (tryWaitFids == null) {
            throw new IllegalStateException("completion queue has no wait object: open it with waitFd true");
        }
        int rc;
        try {
            rc = (int) Fi.TRYWAIT.invokeExact(tryWaitFn, domain.fabric().fid(), tryWaitFids.address(), 1);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc == 0) {
            return true;
        }
        if (rc == -FiErrnoH.FI_EAGAIN) {
            return false;
        }
        throw FabricException.of("fi_trywait", "cq=0x" + Long.toHexString(f), rc, null);
    }

    public Domain domain() {
        return domain;
    }

    @Override
    int closeRank() {
        return 3;
    }

    @Override
    void checkCanClose() {
        if (bound.stream().anyMatch(FabricResource::isOpen)) {
            throw new IllegalStateException(
                    "completion queue is still bound to an open endpoint: close the endpoint first");
        }
    }

    /**
     * {@code fi_cq_read} into {@code out}: {@code static inline ssize_t fi_cq_read(struct fid_cq *cq, void *buf, size_t
     * count) { return cq->ops->read(cq, buf, count); }}
     *
     * @return the number of completions read (0 when none is ready)
     * @throws CompletionErrorException when the next completion is an error ({@code -FI_EAVAIL}), carrying the failed
     *     operation's context and the provider's text
     */
    public int read(Completions out) {
        return read(out, out.capacity());
    }

    /**
     * {@code fi_cq_read} of at most {@code max} completions into {@code out}; the rest stay queued for the next read.
     *
     * @return the number of completions read (0 when none is ready)
     * @throws CompletionErrorException when the next completion is an error ({@code -FI_EAVAIL})
     */
    public int read(Completions out, int max) {
        fid();
        if (max < 1 || max > out.capacity()) {
            throw new IllegalArgumentException("max must be 1.." + out.capacity() + ", got " + max);
        }
        long rc;
        try {
            rc = (long) Fi.CQ_READ.invokeExact(readFn, cq, out.address(), (long) max);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc > 0) {
            out.count = (int) rc;
            ContextPool[] p = pools;
            if (p.length != 0) {
                for (int i = 0; i < rc; i++) {
                    long raw = out.rawContext(i);
                    ContextPool pool = poolOf(p, raw);
                    if (pool != null) {
                        out.setContext(i, pool.release(raw));
                    }
                }
            }
            return (int) rc;
        }
        out.count = 0;
        if (rc == 0 || rc == -FiErrnoH.FI_EAGAIN) {
            return 0;
        }
        if (rc == -FiErrnoH.FI_EAVAIL) {
            throw readError();
        }
        throw FabricException.of("fi_cq_read", "count=" + max, rc, null);
    }

    private static ContextPool poolOf(ContextPool[] pools, long address) {
        for (ContextPool p : pools) {
            if (p.contains(address)) {
                return p;
            }
        }
        return null;
    }

    synchronized void addPool(ContextPool pool) {
        ContextPool[] p = java.util.Arrays.copyOf(pools, pools.length + 1);
        p[p.length - 1] = pool;
        pools = p;
    }

    synchronized void removePool(ContextPool pool) {
        pools = java.util.Arrays.stream(pools).filter(x -> x != pool).toArray(ContextPool[]::new);
    }

    /** {@code fi_cq_readerr} and {@code fi_cq_strerror}: the pending error completion as an exception. */
    private CompletionErrorException readError() {
        MemorySegment readerr = Fi.op(cq + CQ_OPS, OPS_CQ_READERR, "fi_cq_readerr");
        MemorySegment strerror = Fi.op(cq + CQ_OPS, OPS_CQ_STRERROR, "fi_cq_strerror");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment e = arena.allocate(FI_CQ_ERR_ENTRY);
            long rc = (long) Fi.CQ_READERR.invokeExact(readerr, cq, e, 0L);
            if (rc < 0) {
                throw FabricException.of("fi_cq_readerr", "", rc, null);
            }
            int err = e.get(ValueLayout.JAVA_INT, ERR_ERR);
            int provErrno = e.get(ValueLayout.JAVA_INT, ERR_PROV_ERRNO);
            long errData = e.get(ValueLayout.JAVA_LONG, ERR_ERR_DATA);
            MemorySegment buf = arena.allocate(256);
            MemorySegment text =
                    (MemorySegment) Fi.CQ_STRERROR.invokeExact(strerror, cq, provErrno, errData, buf, 256L);
            String providerText = Structs.string(text);
            long context = e.get(ValueLayout.JAVA_LONG, ERR_OP_CONTEXT);
            ContextPool pool = poolOf(pools, context);
            if (pool != null) {
                context = pool.release(context);
            }
            return new CompletionErrorException(
                    context,
                    e.get(ValueLayout.JAVA_LONG, ERR_FLAGS),
                    err,
                    provErrno,
                    providerText == null ? "" : providerText);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
