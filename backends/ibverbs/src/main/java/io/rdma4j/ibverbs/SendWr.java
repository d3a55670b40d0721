package io.rdma4j.ibverbs;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPT_UD;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_INLINE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_WR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SGE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_ATOMIC_CMP_AND_SWP;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_ATOMIC_FETCH_AND_ADD;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE_WITH_IMM;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_SEND;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_SEND_WITH_IMM;
import static io.rdma4j.ibverbs.ffi.VerbsH.SGE_ADDR;
import static io.rdma4j.ibverbs.ffi.VerbsH.SGE_LENGTH;
import static io.rdma4j.ibverbs.ffi.VerbsH.SGE_LKEY;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_ATOMIC_COMPARE_ADD;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_ATOMIC_REMOTE_ADDR;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_ATOMIC_RKEY;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_ATOMIC_SWAP;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_IMM_DATA;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_NEXT;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_NUM_SGE;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_OPCODE;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_RDMA_REMOTE_ADDR;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_RDMA_RKEY;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_SEND_FLAGS;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_SG_LIST;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_UD_AH;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_UD_REMOTE_QKEY;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_UD_REMOTE_QPN;
import static io.rdma4j.ibverbs.ffi.VerbsH.SWR_WR_ID;

import io.rdma4j.ClosedException;
import io.rdma4j.ffi.Segments;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A pre-built send work request ({@code struct ibv_send_wr} with its SGE array) in native memory, patched in place and
 * posted with {@link QueuePair#postSend} as often as needed: posting allocates nothing. Every SGE is bounds-checked
 * against its memory region when set, and the region checked for being open when posted. Not thread-safe: one per
 * posting thread. Chains are built with {@link #next(SendWr)}.
 */
public final class SendWr implements AutoCloseable {
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long WR_SIZE = IBV_SEND_WR.byteSize();
    private static final long SGE_SIZE = IBV_SGE.byteSize();

    private final Arena arena;
    final MemorySegment wr;
    final MemorySegment badWr;
    private final MemorySegment sges;
    private final int maxSge;
    final MemoryRegion[] sgeMr;
    final MemorySegment[] sgeInline;
    final long[] sgeLen;
    int numSge;
    int opcode;
    int flags;
    long remoteAddr;
    long remoteEnd = -1;
    AddressHandle ah;
    SendWr next;

    /** A work request with room for {@code maxSge} scatter/gather elements. */
    public SendWr(int maxSge) {
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
        this.sgeInline = new MemorySegment[maxSge];
        this.sgeLen = new long[maxSge];
        wr.set(ValueLayout.ADDRESS, SWR_SG_LIST, sges);
    }

    public int maxSge() {
        ensureOpen();
        return maxSge;
    }

    void ensureOpen() {
        if (!arena.scope().isAlive()) {
            throw new ClosedException("SendWr");
        }
    }

    private long sgeAt(int i) {
        if (i < 0 || i >= maxSge) {
            throw new IndexOutOfBoundsException("SGE index " + i + " is outside [0, " + maxSge + ")");
        }
        return SGE_SIZE * i;
    }

    public SendWr wrId(long wrId) {
        ensureOpen();
        wr.set(ValueLayout.JAVA_LONG, SWR_WR_ID, wrId);
        return this;
    }

    /** {@code IBV_WR_*}. */
    public SendWr opcode(int opcode) {
        ensureOpen();
        if (opcode < IBV_WR_RDMA_WRITE || opcode > IBV_WR_ATOMIC_FETCH_AND_ADD) {
            throw new IllegalArgumentException("opcode " + opcode
                    + " is not supported: use IBV_WR_RDMA_WRITE .. IBV_WR_ATOMIC_FETCH_AND_ADD (0..6)");
        }
        this.opcode = opcode;
        wr.set(ValueLayout.JAVA_INT, SWR_OPCODE, opcode);
        return this;
    }

    /** {@code IBV_SEND_SIGNALED | IBV_SEND_INLINE | IBV_SEND_FENCE | IBV_SEND_SOLICITED}. */
    public SendWr flags(int flags) {
        ensureOpen();
        this.flags = flags;
        wr.set(ValueLayout.JAVA_INT, SWR_SEND_FLAGS, flags);
        return this;
    }

    /** Immediate data in host order; stored in network order ({@code htonl}) as {@code imm_data} is {@code __be32}. */
    public SendWr immData(int imm) {
        ensureOpen();
        wr.set(BE32, SWR_IMM_DATA, imm);
        return this;
    }

    /**
     * Sets SGE {@code i} to {@code [offset, offset+len)} of {@code mr}; fails here if that range is outside the region.
     */
    public SendWr sge(int i, MemoryRegion mr, long offset, int len) {
        ensureOpen();
        long off = sgeAt(i);
        long addr = mr.checkedAddress(offset, Integer.toUnsignedLong(len));
        writeSge(off, addr, len, mr.lkey());
        sgeMr[i] = mr;
        sgeInline[i] = null;
        sgeLen[i] = Integer.toUnsignedLong(len);
        return this;
    }

    public SendWr sge(int i, Sge sge) {
        ensureOpen();
        return sge(i, sge.mr(), sge.offset(), sge.length());
    }

    /** One SGE, {@code numSge = 1}. */
    public SendWr sge(MemoryRegion mr, long offset, int len) {
        ensureOpen();
        return sge(0, mr, offset, len).numSge(1);
    }

    /**
     * Sets SGE {@code i} to unregistered memory whose bytes are copied into the request at posting
     * ({@code IBV_SEND_INLINE}, up to the queue pair's {@code max_inline_data}).
     */
    public SendWr inlineSge(int i, MemorySegment data, long offset, int len) {
        ensureOpen();
        long off = sgeAt(i);
        Segments.checkRange(data, offset, len, "inline data");
        Segments.requireNative(data, "inline data");
        writeSge(off, data.address() + offset, len, 0);
        sgeMr[i] = null;
        sgeInline[i] = data;
        sgeLen[i] = len;
        return this;
    }

    private void writeSge(long off, long addr, int len, int lkey) {
        sges.set(ValueLayout.JAVA_LONG, off + SGE_ADDR, addr);
        sges.set(ValueLayout.JAVA_INT, off + SGE_LENGTH, len);
        sges.set(ValueLayout.JAVA_INT, off + SGE_LKEY, lkey);
    }

    /** How many of the SGEs are used (0 for a zero-length request). */
    public SendWr numSge(int n) {
        ensureOpen();
        if (n < 0 || n > maxSge) {
            throw new IllegalArgumentException("num_sge " + n + " is outside [0, " + maxSge + "]");
        }
        this.numSge = n;
        wr.set(ValueLayout.JAVA_INT, SWR_NUM_SGE, n);
        return this;
    }

    /**
     * Remote address and key for RDMA_WRITE / RDMA_WRITE_WITH_IMM / RDMA_READ, not bounds-checked (the peer's NIC
     * checks).
     */
    public SendWr rdma(long remoteAddr, int rkey) {
        ensureOpen();
        this.remoteAddr = remoteAddr;
        this.remoteEnd = -1;
        wr.set(ValueLayout.JAVA_LONG, SWR_RDMA_REMOTE_ADDR, remoteAddr);
        wr.set(ValueLayout.JAVA_INT, SWR_RDMA_RKEY, rkey);
        return this;
    }

    /** Remote target at {@code offset} of {@code region}; at posting, the request's length must fit in the region. */
    public SendWr rdma(RemoteRegion region, long offset) {
        ensureOpen();
        if (offset < 0 || offset > region.length()) {
            throw new IndexOutOfBoundsException(
                    "remote offset " + offset + " is outside the peer's " + region.length() + " bytes");
        }
        rdma(region.address() + offset, region.rkey());
        this.remoteEnd = region.address() + region.length();
        return this;
    }

    /** Atomic compare-and-swap or fetch-and-add target: 8 bytes at an 8-aligned remote address. */
    public SendWr atomic(long remoteAddr, int rkey, long compareAdd, long swap) {
        ensureOpen();
        if ((remoteAddr & 7) != 0) {
            throw new IllegalArgumentException(
                    "atomic remote address 0x" + Long.toHexString(remoteAddr) + " is not 8-byte aligned");
        }
        this.remoteAddr = remoteAddr;
        this.remoteEnd = -1;
        wr.set(ValueLayout.JAVA_LONG, SWR_ATOMIC_REMOTE_ADDR, remoteAddr);
        wr.set(ValueLayout.JAVA_LONG, SWR_ATOMIC_COMPARE_ADD, compareAdd);
        wr.set(ValueLayout.JAVA_LONG, SWR_ATOMIC_SWAP, swap);
        wr.set(ValueLayout.JAVA_INT, SWR_ATOMIC_RKEY, rkey);
        return this;
    }

    /** UD destination: address handle, remote QP number and Q_Key. */
    public SendWr ud(AddressHandle ah, int remoteQpn, int remoteQkey) {
        ensureOpen();
        ah.ensureOpen();
        this.ah = ah;
        wr.set(ValueLayout.ADDRESS, SWR_UD_AH, ah.handle);
        wr.set(ValueLayout.JAVA_INT, SWR_UD_REMOTE_QPN, remoteQpn);
        wr.set(ValueLayout.JAVA_INT, SWR_UD_REMOTE_QKEY, remoteQkey);
        return this;
    }

    /** Chains {@code next} after this request (null ends the chain); one post submits the whole chain. */
    public SendWr next(SendWr next) {
        ensureOpen();
        if (next != null) {
            next.ensureOpen();
        }
        this.next = next;
        wr.set(ValueLayout.ADDRESS, SWR_NEXT, next == null ? MemorySegment.NULL : next.wr);
        return this;
    }

    /** Sets one RDMA write: {@code len} bytes from {@code mr+offset} to {@code remoteAddr}. */
    public SendWr write(long wrId, MemoryRegion mr, long offset, int len, long remoteAddr, int rkey, int flags) {
        ensureOpen();
        return wrId(wrId)
                .opcode(IBV_WR_RDMA_WRITE)
                .sge(mr, offset, len)
                .rdma(remoteAddr, rkey)
                .flags(flags);
    }

    /** Sets one RDMA write with immediate data. */
    public SendWr writeWithImm(
            long wrId, MemoryRegion mr, long offset, int len, long remoteAddr, int rkey, int imm, int flags) {
        ensureOpen();
        return wrId(wrId)
                .opcode(IBV_WR_RDMA_WRITE_WITH_IMM)
                .sge(mr, offset, len)
                .rdma(remoteAddr, rkey)
                .immData(imm)
                .flags(flags);
    }

    /** Sets one RDMA read of {@code len} bytes at {@code remoteAddr} into {@code mr+offset}. */
    public SendWr read(long wrId, MemoryRegion mr, long offset, int len, long remoteAddr, int rkey, int flags) {
        ensureOpen();
        return wrId(wrId)
                .opcode(IBV_WR_RDMA_READ)
                .sge(mr, offset, len)
                .rdma(remoteAddr, rkey)
                .flags(flags);
    }

    /** Sets one SEND of {@code len} bytes from {@code mr+offset}. */
    public SendWr send(long wrId, MemoryRegion mr, long offset, int len, int flags) {
        ensureOpen();
        return wrId(wrId).opcode(IBV_WR_SEND).sge(mr, offset, len).flags(flags);
    }

    long totalLength() {
        long t = 0;
        for (int i = 0; i < numSge; i++) {
            t += sgeLen[i];
        }
        return t;
    }

    /** Checks done before posting: open, SGEs set and their regions open, opcode fits the queue pair. */
    void validate(QueuePair qp) {
        ensureOpen();
        if (numSge > qp.maxSendSge()) {
            throw new IllegalArgumentException(
                    "request has " + numSge + " SGEs; " + qp + " was created with max_send_sge=" + qp.maxSendSge());
        }
        for (int i = 0; i < numSge; i++) {
            MemoryRegion mr = sgeMr[i];
            if (mr != null) {
                mr.checkedAddress(0, 0);
                if (mr.pd() != qp.pd()) {
                    throw new IllegalArgumentException(
                            "SGE " + i + " uses a memory region of another protection domain than " + qp);
                }
            } else if (sgeInline[i] != null) {
                if (!sgeInline[i].scope().isAlive()) {
                    Segments.requireAlive(sgeInline[i], "inline data of SGE " + i);
                }
                if ((flags & IBV_SEND_INLINE) == 0) {
                    throw new IllegalArgumentException(
                            "SGE " + i + " is unregistered memory: post it with IBV_SEND_INLINE");
                }
            } else {
                throw new IllegalStateException("SGE " + i + " is not set but num_sge is " + numSge);
            }
        }
        if ((flags & IBV_SEND_INLINE) != 0 && totalLength() > qp.maxInlineData()) {
            throw new IllegalArgumentException(
                    "inline request of " + totalLength() + " bytes exceeds max_inline_data=" + qp.maxInlineData());
        }
        boolean ud = qp.type() == IBV_QPT_UD;
        if (ud) {
            if (opcode != IBV_WR_SEND && opcode != IBV_WR_SEND_WITH_IMM) {
                throw new IllegalArgumentException(
                        "a UD queue pair only sends (IBV_WR_SEND, IBV_WR_SEND_WITH_IMM), not opcode " + opcode);
            }
            if (ah == null) {
                throw new IllegalArgumentException(
                        "a UD send needs a destination: call ud(addressHandle, remoteQpn, qkey)");
            }
            ah.ensureOpen();
        }
        if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
            if (numSge != 1 || sgeLen[0] != 8) {
                throw new IllegalArgumentException("an atomic request needs exactly one 8-byte SGE");
            }
        } else if (opcode != IBV_WR_SEND
                && opcode != IBV_WR_SEND_WITH_IMM
                && remoteEnd >= 0
                && remoteAddr + totalLength() > remoteEnd) {
            throw new IndexOutOfBoundsException("RDMA of " + totalLength() + " bytes at remote 0x"
                    + Long.toHexString(remoteAddr) + " runs past the end of the peer's region");
        }
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
