package io.rdma4j.ibverbs;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_RECV_WR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SGE;
import static io.rdma4j.ibverbs.ffi.VerbsH.RWR_NEXT;
import static io.rdma4j.ibverbs.ffi.VerbsH.RWR_NUM_SGE;
import static io.rdma4j.ibverbs.ffi.VerbsH.RWR_SG_LIST;
import static io.rdma4j.ibverbs.ffi.VerbsH.RWR_WR_ID;
import static io.rdma4j.ibverbs.ffi.VerbsH.SGE_ADDR;
import static io.rdma4j.ibverbs.ffi.VerbsH.SGE_LENGTH;
import static io.rdma4j.ibverbs.ffi.VerbsH.SGE_LKEY;

import io.rdma4j.ClosedException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A pre-built receive work request ({@code struct ibv_recv_wr} with its SGEs), patched in place and posted with
 * {@link QueuePair#postRecv} or {@link SharedReceiveQueue#postRecv}; posting allocates nothing. Not thread-safe.
 */
public final class RecvWr implements AutoCloseable {
    private static final long WR_SIZE = IBV_RECV_WR.byteSize();
    private static final long SGE_SIZE = IBV_SGE.byteSize();

    private final Arena arena;
    final MemorySegment wr;
    final MemorySegment badWr;
    private final MemorySegment sges;
    private final int maxSge;
    final MemoryRegion[] sgeMr;
    int numSge;
    RecvWr next;

    public RecvWr(int maxSge) {
        if (maxSge < 1 || maxSge > 1024) {
            throw new IllegalArgumentException("maxSge must be in [1, 1024], got " + maxSge);
        }
        this.arena = Arena.ofShared();
        MemorySegment all = arena.allocate(WR_SIZE + SGE_SIZE * maxSge + 8, 8);
        this.wr = all.asSlice(0, WR_SIZE);
        this.sges = all.asSlice(WR_SIZE, SGE_SIZE * maxSge);
        this.badWr = all.asSlice(WR_SIZE + SGE_SIZE * maxSge, 8);
        this.maxSge = maxSge;
        this.sgeMr = new MemoryRegion[maxSge];
        wr.set(ValueLayout.ADDRESS, RWR_SG_LIST, sges);
    }

    void ensureOpen() {
        if (!arena.scope().isAlive()) {
            throw new ClosedException("RecvWr");
        }
    }

    public RecvWr wrId(long wrId) {
        ensureOpen();
        wr.set(ValueLayout.JAVA_LONG, RWR_WR_ID, wrId);
        return this;
    }

    /**
     * Sets SGE {@code i} to {@code [offset, offset+len)} of {@code mr}; fails here if that range is outside the region.
     */
    public RecvWr sge(int i, MemoryRegion mr, long offset, int len) {
        ensureOpen();
        if (i < 0 || i >= maxSge) {
            throw new IndexOutOfBoundsException("SGE index " + i + " is outside [0, " + maxSge + ")");
        }
        long addr = mr.checkedAddress(offset, Integer.toUnsignedLong(len));
        long off = SGE_SIZE * i;
        sges.set(ValueLayout.JAVA_LONG, off + SGE_ADDR, addr);
        sges.set(ValueLayout.JAVA_INT, off + SGE_LENGTH, len);
        sges.set(ValueLayout.JAVA_INT, off + SGE_LKEY, mr.lkey());
        sgeMr[i] = mr;
        return this;
    }

    /** One SGE, {@code numSge = 1}. */
    public RecvWr sge(MemoryRegion mr, long offset, int len) {
        ensureOpen();
        return sge(0, mr, offset, len).numSge(1);
    }

    public RecvWr numSge(int n) {
        ensureOpen();
        if (n < 0 || n > maxSge) {
            throw new IllegalArgumentException("num_sge " + n + " is outside [0, " + maxSge + "]");
        }
        this.numSge = n;
        wr.set(ValueLayout.JAVA_INT, RWR_NUM_SGE, n);
        return this;
    }

    public RecvWr next(RecvWr next) {
        ensureOpen();
        if (next != null) {
            next.ensureOpen();
        }
        this.next = next;
        wr.set(ValueLayout.ADDRESS, RWR_NEXT, next == null ? MemorySegment.NULL : next.wr);
        return this;
    }

    void validate(ProtectionDomain pd, int maxRecvSge, Object target) {
        ensureOpen();
        if (numSge > maxRecvSge) {
            throw new IllegalArgumentException(
                    "receive request has " + numSge + " SGEs; " + target + " allows " + maxRecvSge);
        }
        for (int i = 0; i < numSge; i++) {
            MemoryRegion mr = sgeMr[i];
            if (mr == null) {
                throw new IllegalStateException("SGE " + i + " is not set but num_sge is " + numSge);
            }
            mr.checkedAddress(0, 0);
            if (mr.pd() != pd) {
                throw new IllegalArgumentException(
                        "SGE " + i + " uses a memory region of another protection domain than " + target);
            }
        }
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
