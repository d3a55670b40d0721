package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FI_MSG;
import static io.rdma4j.libfabric.ffi.FabricH.FI_READ;
import static io.rdma4j.libfabric.ffi.FabricH.FI_RECV;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_CQ_DATA;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_READ;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_WRITE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_RMA;
import static io.rdma4j.libfabric.ffi.FabricH.FI_SEND;
import static io.rdma4j.libfabric.ffi.FabricH.FI_WRITE;
import static io.rdma4j.libfabric.ffi.FiEqH.ENTRY_DATA;
import static io.rdma4j.libfabric.ffi.FiEqH.ENTRY_FLAGS;
import static io.rdma4j.libfabric.ffi.FiEqH.ENTRY_LEN;
import static io.rdma4j.libfabric.ffi.FiEqH.ENTRY_OP_CONTEXT;
import static io.rdma4j.libfabric.ffi.FiEqH.FI_CQ_DATA_ENTRY;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reusable batch of {@code struct fi_cq_data_entry} that {@link CompletionQueue#read} fills: read it, look at entries
 * {@code 0 .. count() - 1}, read again. Nothing is allocated per read. Owns native memory: close it.
 */
public final class Completions implements AutoCloseable {
    private static final long ENTRY = FI_CQ_DATA_ENTRY.byteSize();
    private final Arena arena;
    private final MemorySegment entries;
    private final int capacity;
    int count;

    public Completions(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        this.capacity = capacity;
        this.arena = Arena.ofShared();
        this.entries = arena.allocate(FI_CQ_DATA_ENTRY, capacity);
    }

    public int capacity() {
        return capacity;
    }

    /** @return entries filled by the last read */
    public int count() {
        return count;
    }

    /** The raw op_context of entry {@code i}, for the queue's FI_CONTEXT translation. */
    long rawContext(int i) {
        return entries.get(ValueLayout.JAVA_LONG, i * ENTRY + ENTRY_OP_CONTEXT);
    }

    void setContext(int i, long context) {
        entries.set(ValueLayout.JAVA_LONG, i * ENTRY + ENTRY_OP_CONTEXT, context);
    }

    long address() {
        return entries.address();
    }

    private long at(int i, long field) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("completion " + i + " of " + count);
        }
        return i * ENTRY + field;
    }

    /** @return the context the operation was posted with ({@code op_context}); 0 for remote CQ data completions */
    public long context(int i) {
        return entries.get(ValueLayout.JAVA_LONG, at(i, ENTRY_OP_CONTEXT));
    }

    /** @return {@code FI_RMA | FI_WRITE}, {@code FI_REMOTE_CQ_DATA | FI_REMOTE_WRITE}... */
    public long flags(int i) {
        return entries.get(ValueLayout.JAVA_LONG, at(i, ENTRY_FLAGS));
    }

    /** @return bytes received, for receive completions */
    public long length(int i) {
        return entries.get(ValueLayout.JAVA_LONG, at(i, ENTRY_LEN));
    }

    /** @return remote CQ data (valid when {@link #hasRemoteData(int)}) */
    public long data(int i) {
        return entries.get(ValueLayout.JAVA_LONG, at(i, ENTRY_DATA));
    }

    /** @return true when the entry carries remote CQ data sent by the peer's {@link Endpoint#writeData} */
    public boolean hasRemoteData(int i) {
        return (flags(i) & FI_REMOTE_CQ_DATA) != 0;
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }

    /** Readable completion flags, e.g. {@code FI_RMA|FI_WRITE}. */
    public static String flagsToString(long flags) {
        StringBuilder sb = new StringBuilder();
        long[] bits = {
            FI_MSG, FI_RMA, FI_READ, FI_WRITE, FI_RECV, FI_SEND, FI_REMOTE_READ, FI_REMOTE_WRITE, FI_REMOTE_CQ_DATA
        };
        String[] names = {
            "FI_MSG",
            "FI_RMA",
            "FI_READ",
            "FI_WRITE",
            "FI_RECV",
            "FI_SEND",
            "FI_REMOTE_READ",
            "FI_REMOTE_WRITE",
            "FI_REMOTE_CQ_DATA"
        };
        long rest = flags;
        for (int i = 0; i < bits.length; i++) {
            if ((flags & bits[i]) != 0) {
                sb.append(sb.isEmpty() ? "" : "|").append(names[i]);
                rest &= ~bits[i];
            }
        }
        if (rest != 0) {
            sb.append(sb.isEmpty() ? "" : "|").append("0x").append(Long.toHexString(rest));
        }
        return sb.isEmpty() ? "0" : sb.toString();
    }
}
