package io.rdma4j.ibverbs;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.Segments;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.ref.Reference;

/** A protection domain ({@code struct ibv_pd}): memory regions, queue pairs, shared receive queues and address handles live in it. */
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
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment mr = (MemorySegment) LibIbverbs.ibv_reg_mr_iova2.handle().invokeExact(cap, handle, segment, segment.byteSize(),
                    segment.address(), access);
            if (Native.isNull(mr)) {
                throw new VerbsException("ibv_reg_mr_iova2", "len=" + segment.byteSize() + ", access=0x" + Integer.toHexString(access),
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
     * Registers {@code length} bytes of a dma-buf ({@code ibv_reg_dmabuf_mr}), e.g. GPU memory exported by its driver.
     * The region has no Java segment: its SGEs are bounds-checked against {@code length}.
     */
    public MemoryRegion registerDmabuf(int fd, long offset, long length, long iova, int access) {
        ensureOpen();
        if (!isDmabufSupported()) {
            throw new UnsupportedOperationException("ibv_reg_dmabuf_mr is not exported by this libibverbs: install rdma-core 34 or newer");
        }
        if (fd < 0 || offset < 0 || length <= 0) {
            throw new IllegalArgumentException("dma-buf registration needs fd >= 0, offset >= 0, length > 0; got fd=" + fd + " offset=" + offset
                    + " length=" + length);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment mr = (MemorySegment) LibIbverbs.ibv_reg_dmabuf_mr.handle().invokeExact(cap, handle, offset, length, iova, fd, access);
            if (Native.isNull(mr)) {
                throw new VerbsException("ibv_reg_dmabuf_mr", "fd=" + fd + ", len=" + length, Errno.read(cap));
            }
            return new MemoryRegion(this, mr, null);
        } catch (Throwable t) {
            throw Native.rethrow(t);
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
     * {@code rdma_create_qp(id, pd, qp_init_attr)}: a queue pair that librdmacm creates on the CM id at {@code cmId} (an
     * {@code struct rdma_cm_id *}) and moves through its states while connecting. Closing it calls {@code rdma_destroy_qp}.
     * {@link io.rdma4j.ibverbs.cm.CmId#createQp} is the usual way in.
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
            int rc = (int) io.rdma4j.ibverbs.ffi.LibRdmacm.rdma_create_qp.handle().invokeExact(cap, id, handle, attr);
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
            throw new IllegalArgumentException("a shared receive queue needs max_wr >= 1 and max_sge >= 1; got " + maxWr + ", " + maxSge);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(VerbsH.IBV_SRQ_INIT_ATTR);
            long base = io.rdma4j.ffi.Structs.offset(VerbsH.IBV_SRQ_INIT_ATTR, "attr");
            attr.set(ValueLayout.JAVA_INT, base, maxWr);
            attr.set(ValueLayout.JAVA_INT, base + 4, maxSge);
            attr.set(ValueLayout.JAVA_INT, base + 8, srqLimit);
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment srq = (MemorySegment) LibIbverbs.ibv_create_srq.handle().invokeExact(cap, handle, attr);
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
