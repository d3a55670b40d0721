package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FI_AV_TABLE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_HMEM;
import static io.rdma4j.libfabric.ffi.FabricH.FI_READ;
import static io.rdma4j.libfabric.ffi.FabricH.FI_RECV;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_READ;
import static io.rdma4j.libfabric.ffi.FabricH.FI_REMOTE_WRITE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_SEND;
import static io.rdma4j.libfabric.ffi.FabricH.FI_WRITE;
import static io.rdma4j.libfabric.ffi.FabricH.version;
import static io.rdma4j.libfabric.ffi.FiDomainH.AV_ATTR_COUNT;
import static io.rdma4j.libfabric.ffi.FiDomainH.AV_ATTR_TYPE;
import static io.rdma4j.libfabric.ffi.FiDomainH.DOMAIN_OPS;
import static io.rdma4j.libfabric.ffi.FiDomainH.OPS_DOMAIN_AV_OPEN;
import static io.rdma4j.libfabric.ffi.FiDomainH.OPS_DOMAIN_CQ_OPEN;

import io.rdma4j.ffi.Segments;
import io.rdma4j.libfabric.ffi.Fi;
import io.rdma4j.libfabric.ffi.FiDomainH;
import io.rdma4j.libfabric.ffi.FiEqH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An open domain ({@code fi_domain}): opens completion queues, address vectors and endpoints, and registers memory.
 * Closing it closes everything opened from it, endpoints first.
 */
public final class Domain extends FabricResource {
    /** Access flags of {@link #register(MemorySegment)}: local and remote read and write, send and receive. */
    public static final long ACCESS_ALL = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE | FI_SEND | FI_RECV;

    private final Fabric fabric;
    private final Info info;
    /** Requested keys (providers without FI_MR_PROV_KEY) must be unique within the domain. */
    private final AtomicLong nextKey = new AtomicLong(1);

    Domain(Fabric fabric, long fid) {
        super("domain " + fabric.info().domain(), fabric);
        this.fabric = fabric;
        this.info = fabric.info();
        opened(fid);
    }

    public Info info() {
        return info;
    }

    public Fabric fabric() {
        return fabric;
    }

    @Override
    int closeRank() {
        return 5;
    }

    /** {@code fi_cq_open} with {@code FI_CQ_FORMAT_DATA} and no wait object (the caller polls). */
    public CompletionQueue openCompletionQueue(int size) {
        return openCompletionQueue(size, false);
    }

    /**
     * {@code fi_cq_open} with {@code FI_CQ_FORMAT_DATA}; with {@code waitFd}, {@code FI_WAIT_FD}, so a poller with
     * nothing to do can block in the kernel until the queue's endpoints have something for it
     * ({@link CompletionQueue#waitFd()}, {@link Fabric#tryWait}). A provider without fd waits refuses it.
     */
    public CompletionQueue openCompletionQueue(int size, boolean waitFd) {
        if (size <= 0) {
            throw new IllegalArgumentException("completion queue size must be positive, was " + size);
        }
        long dom = fid();
        MemorySegment fn = Fi.op(dom + DOMAIN_OPS, OPS_DOMAIN_CQ_OPEN, "fi_cq_open");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(FiEqH.FI_CQ_ATTR);
            attr.set(ValueLayout.JAVA_LONG, FiEqH.CQ_ATTR_SIZE, size);
            attr.set(ValueLayout.JAVA_INT, FiEqH.CQ_ATTR_FORMAT, FiEqH.FI_CQ_FORMAT_DATA);
            attr.set(ValueLayout.JAVA_INT, FiEqH.CQ_ATTR_WAIT_OBJ, waitFd ? FiEqH.FI_WAIT_FD : FiEqH.FI_WAIT_NONE);
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = guarded("fi_cq_open", () -> (int) Fi.OPEN_WITH_ATTR.invokeExact(fn, dom, attr, out, 0L));
            if (rc != 0) {
                throw FabricException.of(
                        "fi_cq_open", "size=" + size + (waitFd ? ", wait_obj=FI_WAIT_FD" : ""), rc, null);
            }
            return new CompletionQueue(this, out.get(ValueLayout.JAVA_LONG, 0), waitFd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code fi_av_open} with {@code FI_AV_TABLE}: peers are numbered 0, 1, 2... in insertion order. */
    public AddressVector openAddressVector(int count) {
        if (count <= 0) {
            throw new IllegalArgumentException("address vector count must be positive, was " + count);
        }
        long dom = fid();
        MemorySegment fn = Fi.op(dom + DOMAIN_OPS, OPS_DOMAIN_AV_OPEN, "fi_av_open");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(FiDomainH.FI_AV_ATTR);
            attr.set(ValueLayout.JAVA_INT, AV_ATTR_TYPE, FI_AV_TABLE);
            attr.set(ValueLayout.JAVA_LONG, AV_ATTR_COUNT, count);
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = guarded("fi_av_open", () -> (int) Fi.OPEN_WITH_ATTR.invokeExact(fn, dom, attr, out, 0L));
            if (rc != 0) {
                throw FabricException.of("fi_av_open", "count=" + count, rc, null);
            }
            return new AddressVector(this, out.get(ValueLayout.JAVA_LONG, 0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * {@code fi_endpoint}, bound to {@code cq} for transmit and receive completions and to {@code av}, then enabled.
     */
    public Endpoint openEndpoint(CompletionQueue cq, AddressVector av) {
        return openEndpoint(cq, av, false);
    }

    /**
     * As {@link #openEndpoint(CompletionQueue, AddressVector)}; {@code forceContextPool} lets tests run the FI_CONTEXT
     * path.
     */
    Endpoint openEndpoint(CompletionQueue cq, AddressVector av, boolean forceContextPool) {
        if (cq.domain() != this || av.domain() != this) {
            throw new IllegalArgumentException("the completion queue and address vector must come from this domain");
        }
        if ("shm".equals(info.provider())) {
            ShmRegions.sweepOnce(); // before this process's first region: see ShmRegions
        }
        return new Endpoint(this, cq, av, forceContextPool);
    }

    /** Registers {@code segment} for {@link #ACCESS_ALL}. */
    public MemoryRegion register(MemorySegment segment) {
        return register(segment, ACCESS_ALL);
    }

    /**
     * {@code fi_mr_reg} of a native segment (any arena; keep it open while the region is in use, deregister before
     * freeing). Honours the provider's mr_mode: with {@code FI_MR_PROV_KEY} the provider chooses the key, otherwise a
     * key unique in this domain is requested; {@link MemoryRegion#remote()} gives the address a peer must use (virtual
     * with {@code FI_MR_VIRT_ADDR}, offsets from 0 otherwise).
     */
    public MemoryRegion register(MemorySegment segment, long access) {
        Segments.requireNative(segment, "segment to register");
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        return new MemoryRegion(this, segment, access, requestedKey());
    }

    private long requestedKey() {
        long requestedKey = 0;
        if (!info.providerKeys()) {
            requestedKey = nextKey.getAndIncrement();
            if (info.mrKeySize() < 8 && requestedKey >>> (8 * info.mrKeySize()) != 0) {
                throw new IllegalStateException("out of " + info.mrKeySize() + "-byte memory keys in " + what()
                        + ": deregister regions or open another domain");
            }
        }
        return requestedKey;
    }

    /**
     * {@code fi_mr_regattr} of host memory ({@code iface = FI_HMEM_SYSTEM}), otherwise as
     * {@link #register(MemorySegment, long)}.
     */
    public MemoryRegion registerAttr(MemorySegment segment, long access) {
        Segments.requireNative(segment, "segment to register");
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        return new MemoryRegion(
                this,
                segment,
                segment.address(),
                segment.byteSize(),
                access,
                requestedKey(),
                FiDomainH.FI_HMEM_SYSTEM,
                0);
    }

    /**
     * The raw {@code fi_mr_regattr} of {@code [address, address + length)} in memory of {@code iface} on device
     * {@code device} (the CUDA ordinal for {@code FI_HMEM_CUDA}). Only the arguments are checked: the provider answers
     * whether it can register such memory. {@link #registerCuda} checks the domain's capabilities first.
     */
    public MemoryRegion registerAttr(long address, long length, long access, int iface, int device) {
        if (address == 0 || length <= 0) {
            throw new IllegalArgumentException("fi_mr_regattr needs a non-NULL address and length > 0; got address=0x"
                    + Long.toHexString(address) + " length=" + length);
        }
        if (iface < FiDomainH.FI_HMEM_SYSTEM || iface > FiDomainH.FI_HMEM_SYNAPSEAI) {
            throw new IllegalArgumentException(
                    "iface " + iface + " is not an enum fi_hmem_iface value of libfabric 1.17 (0..5)");
        }
        if (iface == FiDomainH.FI_HMEM_SYSTEM) {
            throw new IllegalArgumentException(
                    "host memory registers from a MemorySegment: use registerAttr(segment, access)");
        }
        if (device < 0) {
            throw new IllegalArgumentException("device id must be >= 0, got " + device);
        }
        return new MemoryRegion(this, null, address, length, access, requestedKey(), iface, device);
    }

    /**
     * Registers CUDA device memory ({@code fi_mr_regattr} with {@code FI_HMEM_CUDA} and the device ordinal) after
     * checking that this domain's provider offers {@code FI_HMEM}; without it, one error says so and names what would
     * work, including the dma-buf path ({@code FI_MR_DMABUF}) when the runtime libfabric is too old for it.
     */
    public MemoryRegion registerCuda(long address, long length, int device, long access) {
        String why = hmemUnsupported("CUDA");
        if (why != null) {
            throw new io.rdma4j.DeviceRegistrationException(why);
        }
        return registerAttr(address, length, access, FiDomainH.FI_HMEM_CUDA, device);
    }

    /** @return why this domain cannot register {@code kind} device memory, or null when its provider offers FI_HMEM */
    public String hmemUnsupported(String kind) {
        if ((info.caps() & FI_HMEM) != 0) {
            return null;
        }
        int v = Libfabric.version();
        String version = (v >>> 16) + "." + (v & 0xffff);
        return "libfabric provider " + info.provider() + " (libfabric " + version
                + ") does not offer FI_HMEM (its fi_info caps lack it), so it "
                + "cannot register " + kind + " device memory: use a provider and a libfabric built with " + kind
                + " support (efa, "
                + "verbs;ofi_rxm, shm with FI_HMEM in `fi_info -c FI_HMEM`)"
                + (Integer.compareUnsigned(v, FiDomainH.FI_VERSION_1_20) < 0
                        ? "; dma-buf registration (FI_MR_DMABUF) needs libfabric 1.20 or "
                                + "newer, and this process loaded " + version
                        : "");
    }
}
