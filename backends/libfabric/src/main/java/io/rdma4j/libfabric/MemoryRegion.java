package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FiDomainH.DOMAIN_MR;
import static io.rdma4j.libfabric.ffi.FiDomainH.MR_KEY;
import static io.rdma4j.libfabric.ffi.FiDomainH.MR_MEM_DESC;
import static io.rdma4j.libfabric.ffi.FiDomainH.OPS_MR_REG;

import io.rdma4j.ffi.Segments;
import io.rdma4j.libfabric.ffi.Fi;
import io.rdma4j.libfabric.ffi.FiDomainH;
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
    private final int iface;

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
            int rc = guarded("fi_mr_reg", () ->
                    (int) Fi.MR_REG.invokeExact(fn, dom, address, length, access, 0L, requestedKey, 0L, out, 0L));
            java.lang.ref.Reference.reachabilityFence(segment);
            if (rc != 0) {
                throw FabricException.of(
                        "fi_mr_reg",
                        "len=" + length + ", access=0x" + Long.toHexString(access)
                                + (domain.info().providerKeys() ? "" : ", requested_key=" + requestedKey),
                        rc,
                        rc == -12 ? "raise the locked-memory limit (ulimit -l) or register less memory" : null);
            }
            mr = out.get(ValueLayout.JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        this.desc = Fi.getLong(mr + MR_MEM_DESC);
        this.key = Fi.getLong(mr + MR_KEY);
        this.remote = new RemoteRegion(domain.info().virtualAddressing() ? address : 0, key, length);
        this.iface = FiDomainH.FI_HMEM_SYSTEM;
        opened(mr);
    }

    /**
     * {@code fi_mr_regattr} of {@code [address, address + length)} in memory of {@code iface} ({@code FI_HMEM_SYSTEM}
     * with {@code segment} set, or a device interface with its device id and no segment).
     */
    MemoryRegion(
            Domain domain,
            MemorySegment segment,
            long address,
            long length,
            long access,
            long requestedKey,
            int iface,
            int device) {
        super("memory region of " + length + " bytes (" + ifaceName(iface) + ")", domain);
        this.domain = domain;
        this.segment = segment;
        this.address = address;
        this.length = length;
        this.iface = iface;
        long dom = domain.fid();
        MemorySegment fn = Fi.op(dom + DOMAIN_MR, FiDomainH.OPS_MR_REGATTR, "fi_mr_regattr");
        long mr;
        String args = "iface=" + ifaceName(iface) + (iface == FiDomainH.FI_HMEM_SYSTEM ? "" : ", device=" + device)
                + ", addr=0x"
                + Long.toHexString(address) + ", len=" + length + ", access=0x" + Long.toHexString(access)
                + (domain.info().providerKeys() ? "" : ", requested_key=" + requestedKey);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment iov = arena.allocate(FiDomainH.IOVEC);
            iov.set(ValueLayout.JAVA_LONG, FiDomainH.IOVEC_BASE, address);
            iov.set(ValueLayout.JAVA_LONG, FiDomainH.IOVEC_LEN, length);
            MemorySegment attr = arena.allocate(FiDomainH.FI_MR_ATTR);
            attr.set(ValueLayout.ADDRESS, FiDomainH.MR_ATTR_IOV, iov);
            attr.set(ValueLayout.JAVA_LONG, FiDomainH.MR_ATTR_IOV_COUNT, 1);
            attr.set(ValueLayout.JAVA_LONG, FiDomainH.MR_ATTR_ACCESS, access);
            attr.set(ValueLayout.JAVA_LONG, FiDomainH.MR_ATTR_OFFSET, 0);
            attr.set(ValueLayout.JAVA_LONG, FiDomainH.MR_ATTR_REQUESTED_KEY, requestedKey);
            attr.set(ValueLayout.JAVA_INT, FiDomainH.MR_ATTR_IFACE, iface);
            // union { uint64_t reserved; int cuda; int ze; int neuron; int synapseai; } device: every id is the int at
            // offset 0
            attr.set(ValueLayout.JAVA_INT, FiDomainH.MR_ATTR_DEVICE, device);
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            if (segment != null) {
                Segments.requireAlive(segment, "segment to register");
            }
            // static inline int fi_mr_regattr(struct fid_domain *domain, const struct fi_mr_attr *attr, uint64_t flags,
            // struct fid_mr **mr)
            // { return domain->mr->regattr(&domain->fid, attr, flags, mr); }
            int rc = guarded("fi_mr_regattr", () -> (int) Fi.MR_REGATTR.invokeExact(fn, dom, attr, 0L, out));
            if (segment != null) {
                java.lang.ref.Reference.reachabilityFence(segment);
            }
            if (rc != 0) {
                throw FabricException.of(
                        "fi_mr_regattr",
                        args,
                        rc,
                        rc == -12
                                ? "raise the locked-memory limit (ulimit -l) or register less memory"
                                : iface != FiDomainH.FI_HMEM_SYSTEM
                                        ? "The provider " + domain.info().provider() + " (libfabric "
                                                + Libfabric.versionString() + ") cannot register " + ifaceName(iface)
                                                + " memory: use a build and provider with "
                                                + "FI_HMEM support for it, or stage through host memory"
                                        : null);
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

    /** @return the C name of an {@code enum fi_hmem_iface} value, {@code FI_HMEM_<n>} when unknown */
    public static String ifaceName(int iface) {
        return switch (iface) {
            case FiDomainH.FI_HMEM_SYSTEM -> "FI_HMEM_SYSTEM";
            case FiDomainH.FI_HMEM_CUDA -> "FI_HMEM_CUDA";
            case FiDomainH.FI_HMEM_ROCR -> "FI_HMEM_ROCR";
            case FiDomainH.FI_HMEM_ZE -> "FI_HMEM_ZE";
            case FiDomainH.FI_HMEM_NEURON -> "FI_HMEM_NEURON";
            case FiDomainH.FI_HMEM_SYNAPSEAI -> "FI_HMEM_SYNAPSEAI";
            default -> "FI_HMEM_" + iface;
        };
    }

    /** @return the memory's {@code enum fi_hmem_iface}: {@code FI_HMEM_SYSTEM} for host memory */
    public int iface() {
        return iface;
    }

    @Override
    int closeRank() {
        return 1;
    }

    public Domain domain() {
        return domain;
    }

    /** @return the registered memory, or null for device memory registered by address */
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

    /** @return the registered memory's start address (host or device) */
    public long address() {
        return address;
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
        if (segment != null && !segment.scope().isAlive()) {
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
