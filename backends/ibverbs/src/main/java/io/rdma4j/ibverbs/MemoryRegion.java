package io.rdma4j.ibverbs;

import io.rdma4j.ffi.Segments;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Registered memory ({@code struct ibv_mr}) with its local and remote keys. */
public final class MemoryRegion extends NativeObject {
    private final ProtectionDomain pd;
    private final MemorySegment segment;
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;

    MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment segment) {
        super("MemoryRegion", mr, pd);
        this.pd = pd;
        this.segment = segment;
        MemorySegment m = mr.reinterpret(VerbsH.IBV_MR.byteSize());
        this.address = m.get(ValueLayout.JAVA_LONG, io.rdma4j.ffi.Structs.offset(VerbsH.IBV_MR, "addr"));
        this.length = m.get(ValueLayout.JAVA_LONG, io.rdma4j.ffi.Structs.offset(VerbsH.IBV_MR, "length"));
        this.lkey = m.get(ValueLayout.JAVA_INT, VerbsH.MR_LKEY);
        this.rkey = m.get(ValueLayout.JAVA_INT, VerbsH.MR_RKEY);
    }

    public ProtectionDomain pd() {
        ensureOpen();
        return pd;
    }

    /** @return the registered segment, or null for a dma-buf region */
    public MemorySegment segment() {
        ensureOpen();
        return segment;
    }

    /** @return the start address (what a peer uses as remote address base) */
    public long address() {
        ensureOpen();
        return address;
    }

    public long length() {
        ensureOpen();
        return length;
    }

    public int lkey() {
        ensureOpen();
        return lkey;
    }

    public int rkey() {
        ensureOpen();
        return rkey;
    }

    /**
     * Fails unless the region is open, its memory alive, and {@code [offset, offset+len)} inside it; returns the
     * address.
     */
    long checkedAddress(long offset, long len) {
        ensureOpen();
        if (segment != null && !segment.scope().isAlive()) {
            throw new IllegalStateException(
                    what
                            + " covers memory that was freed (its arena is closed): close the region before freeing its memory");
        }
        if (len > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("an SGE covers at most 4 GiB - 1 bytes; asked for " + len);
        }
        if (offset < 0 || len < 0 || offset > length - len) {
            // the message is built only here: this check runs on every post and must not allocate
            Segments.checkRange(length, offset, len, "SGE over " + what + " (" + length + " bytes)");
        }
        return address + offset;
    }

    /** A scatter/gather element over {@code [offset, offset+len)} of this region, bounds-checked now and at posting. */
    public Sge sge(long offset, int len) {
        ensureOpen();
        checkedAddress(offset, Integer.toUnsignedLong(len));
        return new Sge(this, offset, len);
    }

    /** A remote description of {@code [offset, offset+len)} of this region, to send to a peer. */
    public RemoteRegion remote(long offset, long len) {
        ensureOpen();
        checkedAddress(offset, len);
        return new RemoteRegion(address + offset, len, rkey);
    }

    @Override
    void destroy() {
        try {
            int rc = (int) LibIbverbs.ibv_dereg_mr.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_dereg_mr", "", rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
