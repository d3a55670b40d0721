package io.rdma4j.ibverbs;

import io.rdma4j.DeviceRegistrationException;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.Segments;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions, queue pairs, shared receive queues and address handles
 * live in it.
 */
public final class ProtectionDomain extends NativeObject {
    private final Context context;

    ProtectionDomain(Context context, MemorySegment pd) {
        super("ProtectionDomain(" + context.deviceName() + ")", pd, context);
        this.context = context;
    }

    public Context context() {
        ensureOpen();
        return context;
    }

    /**
     * Registers {@code segment} ({@code ibv_reg_mr}, a macro over {@code ibv_reg_mr_iova2} with iova = address). The
     * segment must be native and stay alive while the region is registered: close the region before its arena.
     *
     * @param access {@code IBV_ACCESS_*} flags
     */
    public MemoryRegion register(MemorySegment segment, int access) {
        ensureOpen();
        Segments.requireNative(segment, "segment to register");
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        checkAccess(access, "ibv_reg_mr");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment mr = (MemorySegment) LibIbverbs.ibv_reg_mr_iova2
                    .handle()
                    .invokeExact(cap, handle, segment, segment.byteSize(), segment.address(), access);
            if (Native.isNull(mr)) {
                throw new VerbsException(
                        "ibv_reg_mr_iova2",
                        "len=" + segment.byteSize() + ", access=0x" + Integer.toHexString(access),
                        Errno.read(cap));
            }
            return new MemoryRegion(this, mr, segment);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            Reference.reachabilityFence(segment);
        }
    }

    /** @return true if libibverbs has {@code ibv_reg_dmabuf_mr} (rdma-core 34 and later) */
    public static boolean isDmabufSupported() {
        return LibIbverbs.ibv_reg_dmabuf_mr.isPresent();
    }

    /**
     * Registers {@code length} bytes of a dma-buf ({@code ibv_reg_dmabuf_mr}, IBVERBS_1.12), e.g. GPU memory exported
     * by its driver: the region covers {@code [offset, offset + length)} of the dma-buf and peers address it from
     * {@code iova}. The region has no Java segment: its SGEs are bounds-checked against {@code length}. The fd may be
     * closed once this returns (the registration holds the dma-buf).
     *
     * @param access {@code IBV_ACCESS_*} flags
     */
    public MemoryRegion registerDmabuf(int fd, long offset, long length, long iova, int access) {
        ensureOpen();
        if (!isDmabufSupported()) {
            throw new UnsupportedOperationException(
                    "ibv_reg_dmabuf_mr is not exported by this libibverbs: install rdma-core 34 or newer");
        }
        if (fd < 0) {
            throw new IllegalArgumentException("dma-buf fd must be >= 0, got " + fd
                    + ": pass the fd the exporter returned (e.g. GpuBuffer.exportDmaBuf())");
        }
        if (offset < 0 || length <= 0) {
            throw new IllegalArgumentException("dma-buf registration needs offset >= 0 and length > 0; got offset="
                    + offset + " length=" + length);
        }
        if (Long.MAX_VALUE - offset < length) {
            throw new IllegalArgumentException("dma-buf range offset=" + offset + " + length=" + length + " overflows");
        }
        checkAccess(access, "ibv_reg_dmabuf_mr");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment mr = (MemorySegment)
                    LibIbverbs.ibv_reg_dmabuf_mr.handle().invokeExact(cap, handle, offset, length, iova, fd, access);
            if (Native.isNull(mr)) {
                throw new VerbsException(
                        "ibv_reg_dmabuf_mr",
                        "fd=" + fd + ", offset=" + offset + ", len=" + length + ", iova=0x" + Long.toHexString(iova)
                                + ", access=0x" + Integer.toHexString(access),
                        Errno.read(cap));
            }
            return new MemoryRegion(this, mr, null);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Registers memory that has no Java segment by its address ({@code ibv_reg_mr} with iova = address), e.g. a GPU's
     * device address, which the NIC driver can pin only through a peer-memory client such as {@code nvidia_peermem}.
     */
    public MemoryRegion registerAddress(long address, long length, int access) {
        ensureOpen();
        if (address == 0 || length <= 0) {
            throw new IllegalArgumentException(
                    "registration by address needs a non-NULL address and length > 0; got address=0x"
                            + Long.toHexString(address) + " length=" + length);
        }
        checkAccess(access, "ibv_reg_mr");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment mr = (MemorySegment) LibIbverbs.ibv_reg_mr_iova2
                    .handle()
                    .invokeExact(cap, handle, MemorySegment.ofAddress(address), length, address, access);
            if (Native.isNull(mr)) {
                throw new VerbsException(
                        "ibv_reg_mr_iova2",
                        "addr=0x" + Long.toHexString(address) + ", len=" + length + ", access=0x"
                                + Integer.toHexString(access),
                        Errno.read(cap));
            }
            return new MemoryRegion(this, mr, null);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Registers device (GPU) memory for GPUDirect RDMA: first as a dma-buf ({@code ibv_reg_dmabuf_mr} with offset =
     * pointer minus the page-aligned base, iova = pointer, the fd from {@link DeviceMemory#exportDmaBuf()}), then, if
     * that fails, with {@code ibv_reg_mr} on the device address (which works when {@code nvidia_peermem} is loaded).
     * The region's address is the device address.
     *
     * @throws DeviceRegistrationException naming both paths, the error of each and the fix, when neither works
     */
    public MemoryRegion registerDevice(DeviceMemory memory, int access) {
        ensureOpen();
        if (memory == null) {
            throw new IllegalArgumentException("device memory is null");
        }
        if (memory.length() <= 0 || memory.address() == 0) {
            throw new IllegalArgumentException("device memory needs a non-NULL address and length > 0: " + memory);
        }
        checkAccess(access, "ibv_reg_dmabuf_mr");
        String dmabuf;
        if (!isDmabufSupported()) {
            dmabuf = "ibv_reg_dmabuf_mr is not exported by this libibverbs (rdma-core 34 or newer has it)";
        } else {
            try (DeviceMemory.DmaBufHandle buf = memory.exportDmaBuf()) {
                if (buf.length() != memory.length() || buf.iova() != memory.address()) {
                    throw new IllegalStateException("the dma-buf export covers iova=0x" + Long.toHexString(buf.iova())
                            + " length=" + buf.length() + ", not the memory's 0x" + Long.toHexString(memory.address())
                            + " length=" + memory.length());
                }
                return registerDmabuf(buf.fd(), buf.offset(), buf.length(), buf.iova(), access);
            } catch (RuntimeException e) {
                dmabuf = e.getMessage();
            }
        }
        String peermem;
        try {
            return registerAddress(memory.address(), memory.length(), access);
        } catch (RuntimeException e) {
            peermem = e.getMessage();
        }
        throw new DeviceRegistrationException(
                context.deviceName() + " cannot register " + memory.length() + " bytes of " + memory.kind()
                        + " memory at 0x" + Long.toHexString(memory.address()) + " (device " + memory.pciAddress()
                        + "): dma-buf: " + dmabuf
                        + "; ibv_reg_mr on the device address (peer memory): " + peermem
                        + ". Fix: load the peer-memory module (modprobe nvidia_peermem), "
                        + "or use a NIC and driver with dma-buf support (mlx5 or efa on Linux 5.12+ with rdma-core 34+, and CUDA 11.7+ with the "
                        + "open GPU kernel modules)");
    }

    /** Valid {@code IBV_ACCESS_*} bits: the eight base flags and the optional range. */
    private static final int VALID_ACCESS = 0xFF | VerbsH.IBV_ACCESS_OPTIONAL_RANGE;

    /** The checks {@code ib_check_mr_access} makes in the kernel, done in Java so the error names the flag. */
    static void checkAccess(int access, String function) {
        if ((access & ~VALID_ACCESS) != 0) {
            throw new IllegalArgumentException(function + ": access 0x" + Integer.toHexString(access)
                    + " has unknown bits 0x" + Integer.toHexString(access & ~VALID_ACCESS)
                    + ": use IBV_ACCESS_* flags (bits 0-7, optional bits 20-29)");
        }
        if ((access & (VerbsH.IBV_ACCESS_REMOTE_WRITE | VerbsH.IBV_ACCESS_REMOTE_ATOMIC)) != 0
                && (access & VerbsH.IBV_ACCESS_LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException(
                    function + ": access 0x" + Integer.toHexString(access)
                            + " grants remote write or atomics without IBV_ACCESS_LOCAL_WRITE, which verbs requires: add IBV_ACCESS_LOCAL_WRITE");
        }
    }

    /** {@code ibv_create_qp}. */
    public QueuePair createQp(QpInitAttr init) {
        ensureOpen();
        init.validate(context);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = init.write(a);
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment qp = (MemorySegment) LibIbverbs.ibv_create_qp.handle().invokeExact(cap, handle, attr);
            if (Native.isNull(qp)) {
                throw new VerbsException("ibv_create_qp", init.toString(), Errno.read(cap));
            }
            return new QueuePair(this, qp, init, QpInitAttr.readCap(attr), null);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code rdma_create_qp(id, pd, qp_init_attr)}: a queue pair that librdmacm creates on the CM id at {@code cmId}
     * (an {@code struct rdma_cm_id *}) and moves through its states while connecting. Closing it calls
     * {@code rdma_destroy_qp}. {@link io.rdma4j.ibverbs.cm.CmId#createQp} is the usual way in.
     */
    public QueuePair createQpOnCmId(MemorySegment cmId, QpInitAttr init) {
        ensureOpen();
        init.validate(context);
        if (Native.isNull(cmId)) {
            throw new IllegalArgumentException("rdma_cm_id is NULL");
        }
        MemorySegment id = cmId.reinterpret(io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_ID.byteSize());
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = init.write(a);
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int)
                    io.rdma4j.ibverbs.ffi.LibRdmacm.rdma_create_qp.handle().invokeExact(cap, id, handle, attr);
            if (rc != 0) {
                throw new VerbsException("rdma_create_qp", init.toString(), Errno.read(cap));
            }
            MemorySegment qp = id.get(ValueLayout.ADDRESS, io.rdma4j.ibverbs.ffi.RdmaCmaH.CM_ID_QP);
            Runnable destroyer = () -> {
                try {
                    io.rdma4j.ibverbs.ffi.LibRdmacm.rdma_destroy_qp.handle().invokeExact(id);
                } catch (Throwable t) {
                    throw Native.rethrow(t);
                }
            };
            return QueuePair.ofCm(this, qp, init, QpInitAttr.readCap(attr), destroyer);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_create_srq}. */
    public SharedReceiveQueue createSrq(int maxWr, int maxSge, int srqLimit) {
        ensureOpen();
        if (maxWr < 1 || maxSge < 1 || srqLimit < 0) {
            throw new IllegalArgumentException(
                    "a shared receive queue needs max_wr >= 1 and max_sge >= 1; got " + maxWr + ", " + maxSge);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(VerbsH.IBV_SRQ_INIT_ATTR);
            long base = io.rdma4j.ffi.Structs.offset(VerbsH.IBV_SRQ_INIT_ATTR, "attr");
            attr.set(ValueLayout.JAVA_INT, base, maxWr);
            attr.set(ValueLayout.JAVA_INT, base + 4, maxSge);
            attr.set(ValueLayout.JAVA_INT, base + 8, srqLimit);
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment srq =
                    (MemorySegment) LibIbverbs.ibv_create_srq.handle().invokeExact(cap, handle, attr);
            if (Native.isNull(srq)) {
                throw new VerbsException("ibv_create_srq", "max_wr=" + maxWr + ", max_sge=" + maxSge, Errno.read(cap));
            }
            return new SharedReceiveQueue(this, srq, attr.get(ValueLayout.JAVA_INT, base + 4));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_create_ah}: an address handle for UD sends. */
    public AddressHandle createAh(AhAttr attr) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(VerbsH.IBV_AH_ATTR);
            attr.write(s, 0);
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment ah = (MemorySegment) LibIbverbs.ibv_create_ah.handle().invokeExact(cap, handle, s);
            if (Native.isNull(ah)) {
                throw new VerbsException("ibv_create_ah", attr.toString(), Errno.read(cap));
            }
            return new AddressHandle(this, ah);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void destroy() {
        try {
            int rc = (int) LibIbverbs.ibv_dealloc_pd.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_dealloc_pd", "", rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
