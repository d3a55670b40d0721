package io.rdma4j.libfabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Operation contexts for providers that require {@code FI_CONTEXT} or {@code FI_CONTEXT2} mode (efa-direct, for one):
 * they use the memory the context points at while the operation is in flight, so the caller's number cannot be passed
 * as the pointer. Each operation gets a 64-byte slot ({@code sizeof(struct fi_context2)}) of native memory; the slot's
 * address goes to the provider, the caller's number is kept in a parallel array, and the completion queue translates
 * the address back and frees the slot. Running out of slots is back-pressure, as a full queue would be.
 */
final class ContextPool {
    /**
     * {@code struct fi_context2 { void *internal[8]; }}; also covers {@code struct fi_context { void *internal[4]; }}.
     */
    static final long SLOT = 64;

    private final Arena arena = Arena.ofShared();
    private final long base;
    private final long end;
    private final long[] user;
    private final int[] free;
    private int top;

    ContextPool(int slots) {
        MemorySegment s = arena.allocate(slots * SLOT, 64);
        this.base = s.address();
        this.end = base + slots * SLOT;
        this.user = new long[slots];
        this.free = new int[slots];
        for (int i = 0; i < slots; i++) {
            free[i] = slots - 1 - i;
        }
        this.top = slots;
    }

    /** @return the native context for an operation with the caller's {@code context}, or 0 when every slot is in use */
    synchronized long acquire(long context) {
        if (top == 0) {
            return 0;
        }
        int slot = free[--top];
        user[slot] = context;
        return base + slot * SLOT;
    }

    boolean contains(long address) {
        return address >= base && address < end;
    }

    /** Frees the slot at {@code address} and returns the caller's context it carried. */
    synchronized long release(long address) {
        int slot = (int) ((address - base) / SLOT);
        free[top++] = slot;
        return user[slot];
    }

    synchronized int inUse() {
        return free.length - top;
    }

    void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
