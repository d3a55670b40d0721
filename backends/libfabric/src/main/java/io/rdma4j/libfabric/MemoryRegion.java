package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FiDomainH.DOMAIN_MR;
import static io.rdma4j.libfabric.ffi.FiDomainH.MR_KEY;
import static io.rdma4j.libfabric.ffi.FiDomainH.MR_MEM_DESC;
import static io.rdma4j.libfabric.ffi.FiDomainH.OPS_MR_REG;

import io.rdma4j.ffi.Segments;
import io.rdma4j.libfabric.ffi.Fi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Registered memory ({@code fi_mr_reg}). Local operations pass its descriptor ({@code fi_mr_desc}, required by
 * {@code FI_MR_LOCAL} providers and harmless elsewhere); peers reach it through {@link #remote()}.
 */
public final class MemoryRegion extends FabricResource {
    private final Domain domain;
    private final MemorySegment segment;
    private final long address;
    private final long length;
    private final long desc;
    private final long key;
    private final RemoteRegion remote;

    MemoryRegion(Domain domain, MemorySegment segment, long access, long requestedKey) {
        super("memory region of " + segment.byteSize() + " bytes", domain);
        this.domain = domain;
        this.segment = segment;
        this.address = segment.address();
        this.length = segment.byteSize();
        long dom = domain.fid();
        MemorySegment fn = Fi.op(dom + DOMAIN_MR, OPS_MR_REG, "fi_mr_reg");
        long mr;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            Segments.requireAlive(segment, "segment to register");
            // static inline int fi_mr_reg(domain, buf, len, acs, offset, requested_key, flags, mr, context)
            // { return domain->mr->reg(&domain->fid, buf, len, acs, offset, requested_key, flags, mr, context); }
            int rc = guarded("fi_mr_reg", () -> (int) Fi.MR_REG.invokeExact(fn, dom, address, length, access, 0L, requestedKey, 0L, out, 0L));
            java.lang.ref.Reference.reachabilityFence(segment);
            if (rc != 0) {
                throw FabricException.of("fi_mr_reg", "len=" + length + ", access=0x" + Long.toHexString(access)
                        + (domain.info().providerKeys() ? "" : ", requested_key=" + requestedKey), rc,
                        rc == -12 ? "raise the locked-memory limit (ulimit -l) or register less memory" : null);
            }
            mr = out.get(ValueLayout.JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        this.desc = Fi.getLong(mr + MR_MEM_DESC);
        this.key = Fi.getLong(mr + MR_KEY);
        this.remote = new RemoteRegion(domain.info().virtualAddressing() ? address : 0, key, length);
        opened(mr);
    }

    @Override
    int closeRank() {
        return 1;
    }

    public Domain domain() {
        return domain;
    }

    /** @return the registered memory */
    public MemorySegment segment() {
        return segment;
    }

    /** @return {@code fi_mr_key(mr)}: the key a peer uses to reach this region */
    public long key() {
        checkOpen();
        return key;
    }

    /** @return {@code fi_mr_desc(mr)} as an address (0 when the provider has none) */
    public long descriptor() {
        return desc;
    }

    /** @return what a peer needs to write or read this region: address (virtual or 0), key and length */
    public RemoteRegion remote() {
        checkOpen();
        return remote;
    }

    public long byteSize() {
        return length;
    }

    private void checkOpen() {
        fid();
    }

    /**
     * The address of {@code [offset, offset + len)} after checking, in Java, that the region is open, its memory not
     * freed, and the range inside it.
     */
    long checkedAddress(long offset, long len, String op) {
        fid();
        if (!segment.scope().isAlive()) {
            throw new IllegalStateException(op + ": the registered segment was freed (its arena is closed); close the"
                    + " MemoryRegion before freeing its memory");
        }
        if (offset < 0 || len < 0 || offset > length - len) {
            throw new IndexOutOfBoundsException(op + ": local range [" + offset + ", " + offset + " + " + len
                    + ") is outside the " + length + "-byte registered region");
        }
        return address + offset;
    }
}
