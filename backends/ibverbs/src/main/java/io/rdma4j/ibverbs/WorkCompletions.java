package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A reusable array of {@code struct ibv_wc} that {@link CompletionQueue#poll} fills; read entry {@code i} below
 * {@link #count()} with the accessors. Owns its memory: close it when done.
 */
public final class WorkCompletions implements AutoCloseable {
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long SIZE = VerbsH.IBV_WC.byteSize();

    private final Arena arena;
    final MemorySegment segment;
    private final int capacity;
    int count;

    public WorkCompletions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        this.arena = Arena.ofShared();
        this.segment = arena.allocate(SIZE * capacity, 8);
        this.capacity = capacity;
    }

    public int capacity() {
        ensureUsable();
        return capacity;
    }

    /** @return how many entries the last poll filled */
    public int count() {
        ensureUsable();
        return count;
    }

    void ensureUsable() {
        if (!segment.scope().isAlive()) {
            throw new io.rdma4j.ClosedException("WorkCompletions");
        }
    }

    private long at(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("completion " + i + " of " + count + " polled");
        }
        return i * SIZE;
    }

    public long wrId(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_LONG, at(i) + VerbsH.WC_WR_ID);
    }

    /** @return {@code IBV_WC_SUCCESS} (0) or an error status; name it with {@link VerbsException#wcStatusName} */
    public int status(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_STATUS);
    }

    public boolean isSuccess(int i) {
        ensureUsable();
        return status(i) == VerbsH.IBV_WC_SUCCESS;
    }

    /** @return {@code IBV_WC_*} opcode (valid only for successful completions) */
    public int opcode(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_OPCODE);
    }

    public int vendorErr(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_VENDOR_ERR);
    }

    public int byteLen(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_BYTE_LEN);
    }

    /** @return the immediate data in host order (ntohl of {@code imm_data}); valid when {@link #hasImm} */
    public int immData(int i) {
        ensureUsable();
        return segment.get(BE32, at(i) + VerbsH.WC_IMM_DATA);
    }

    public boolean hasImm(int i) {
        ensureUsable();
        return (flags(i) & VerbsH.IBV_WC_WITH_IMM) != 0;
    }

    public int qpNum(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_QP_NUM);
    }

    public int srcQp(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_SRC_QP);
    }

    public int flags(int i) {
        ensureUsable();
        return segment.get(ValueLayout.JAVA_INT, at(i) + VerbsH.WC_WC_FLAGS);
    }

    /**
     * Throws a {@link VerbsException} naming the status ({@code IBV_WC_REM_ACCESS_ERR}...) if completion {@code i}
     * failed.
     */
    public void throwIfError(int i) {
        ensureUsable();
        int st = status(i);
        if (st != VerbsH.IBV_WC_SUCCESS) {
            throw VerbsException.ofCompletion(wrId(i), st, opcode(i), vendorErr(i), qpNum(i));
        }
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
