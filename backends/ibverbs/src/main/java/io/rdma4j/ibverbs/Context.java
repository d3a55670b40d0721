package io.rdma4j.ibverbs;

import static io.rdma4j.ffi.Structs.offset;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.OpsTable;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.Poll;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** An open RDMA device ({@code struct ibv_context}): queries, protection domains, completion queues, async events. */
public final class Context extends NativeObject {
    private final boolean owned;
    private final String deviceName;
    /** The ibv_context, sized to its layout; ops at {@link VerbsH#CONTEXT_OPS_OFFSET}. */
    final MemorySegment ctx;

    private volatile DeviceAttr deviceAttr;

    private Context(MemorySegment ctx, String deviceName, boolean owned) {
        super("Context(" + deviceName + ")", ctx);
        this.ctx = ctx.reinterpret(VerbsH.IBV_CONTEXT.byteSize());
        this.deviceName = deviceName;
        this.owned = owned;
    }

    static Context open(MemorySegment device, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment ctx =
                    (MemorySegment) LibIbverbs.ibv_open_device.handle().invokeExact(cap, device);
            if (Native.isNull(ctx)) {
                throw new VerbsException("ibv_open_device", name, Errno.read(cap));
            }
            return new Context(ctx, name, true);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Wraps a context that another library owns (librdmacm's {@code id->verbs}); closing it does not close the device.
     */
    public static Context wrapUnowned(MemorySegment ctx, String deviceName) {
        if (Native.isNull(ctx)) {
            throw new IllegalArgumentException("ibv_context is NULL");
        }
        return new Context(ctx, deviceName, false);
    }

    /** Opens the device named {@code name}, or the first one when null. */
    public static Context open(String name) {
        return Verbs.openDevice(name);
    }

    public String deviceName() {
        return deviceName;
    }

    /** @return {@code ctx->num_comp_vectors} */
    public int numCompVectors() {
        ensureOpen();
        return ctx.get(ValueLayout.JAVA_INT, VerbsH.CONTEXT_NUM_COMP_VECTORS);
    }

    /** {@code ibv_query_device}. */
    public DeviceAttr queryDevice() {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment at = a.allocate(VerbsH.IBV_DEVICE_ATTR);
            int rc = (int) LibIbverbs.ibv_query_device.handle().invokeExact(ctx, at);
            if (rc != 0) {
                throw new VerbsException("ibv_query_device", deviceName, rc);
            }
            var L = VerbsH.IBV_DEVICE_ATTR;
            String fw = new String(at.asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII)
                    .replace("\0", "");
            DeviceAttr d = new DeviceAttr(
                    fw,
                    Long.reverseBytes(at.get(ValueLayout.JAVA_LONG, offset(L, "node_guid"))),
                    at.get(ValueLayout.JAVA_LONG, offset(L, "max_mr_size")),
                    i(at, L, "vendor_id"),
                    i(at, L, "vendor_part_id"),
                    i(at, L, "max_qp"),
                    i(at, L, "max_qp_wr"),
                    i(at, L, "max_sge"),
                    i(at, L, "max_sge_rd"),
                    i(at, L, "max_cq"),
                    i(at, L, "max_cqe"),
                    i(at, L, "max_mr"),
                    i(at, L, "max_pd"),
                    i(at, L, "max_qp_rd_atom"),
                    i(at, L, "max_qp_init_rd_atom"),
                    i(at, L, "atomic_cap"),
                    i(at, L, "max_ah"),
                    i(at, L, "max_srq"),
                    i(at, L, "max_srq_wr"),
                    i(at, L, "max_srq_sge"),
                    Byte.toUnsignedInt(at.get(ValueLayout.JAVA_BYTE, offset(L, "phys_port_cnt"))));
            deviceAttr = d;
            return d;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The device attributes, queried once and cached. */
    public DeviceAttr deviceAttr() {
        ensureOpen();
        DeviceAttr d = deviceAttr;
        return d != null ? d : queryDevice();
    }

    private static int i(MemorySegment s, java.lang.foreign.GroupLayout l, String name) {
        return s.get(ValueLayout.JAVA_INT, offset(l, name));
    }

    /**
     * {@code ibv_query_port}, a macro over {@code static inline ___ibv_query_port}:
     *
     * <pre>{@code
     * struct verbs_context *vctx = verbs_get_ctx_op(context, query_port);
     * if (!vctx) {
     *     memset(port_attr, 0, sizeof(*port_attr));
     *     return ibv_query_port(context, port_num, (struct _compat_ibv_port_attr *)port_attr);
     * }
     * return vctx->query_port(context, port_num, port_attr, sizeof(*port_attr));
     * }</pre>
     */
    public PortAttr queryPort(int port) {
        ensureOpen();
        checkPort(port);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment at = a.allocate(VerbsH.IBV_PORT_ATTR);
            MemorySegment fn = verbsContextOp(VerbsH.VCTX_QUERY_PORT);
            int rc;
            if (Native.isNull(fn)) {
                rc = (int) LibIbverbs.ibv_query_port.handle().invokeExact(ctx, (byte) port, at);
            } else {
                rc = (int)
                        LibIbverbs.QUERY_PORT_OP.invokeExact(fn, ctx, (byte) port, at, VerbsH.IBV_PORT_ATTR.byteSize());
            }
            if (rc != 0) {
                throw new VerbsException("ibv_query_port", deviceName + ", port=" + port, rc);
            }
            var L = VerbsH.IBV_PORT_ATTR;
            return new PortAttr(
                    i(at, L, "state"),
                    i(at, L, "max_mtu"),
                    i(at, L, "active_mtu"),
                    i(at, L, "gid_tbl_len"),
                    i(at, L, "port_cap_flags"),
                    Integer.toUnsignedLong(i(at, L, "max_msg_sz")),
                    u16(at, L, "lid"),
                    u16(at, L, "sm_lid"),
                    u8(at, L, "lmc"),
                    u8(at, L, "active_width"),
                    u8(at, L, "active_speed"),
                    u8(at, L, "phys_state"),
                    u8(at, L, "link_layer"));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code verbs_get_ctx_op(ctx, op)}: the extended op at {@code opOffset} in {@code struct verbs_context}, or NULL
     * when the context is not extended, too old for the op, or the provider leaves it empty.
     */
    private MemorySegment verbsContextOp(long opOffset) {
        MemorySegment abi = ctx.get(ValueLayout.ADDRESS, VerbsH.CONTEXT_ABI_COMPAT);
        if (abi.address() != -1L) { // __VERBS_ABI_IS_EXTENDED is (void *)UINTPTR_MAX
            return MemorySegment.NULL;
        }
        MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - VerbsH.VCTX_CONTEXT)
                .reinterpret(VerbsH.VERBS_CONTEXT.byteSize());
        long sz = vctx.get(ValueLayout.JAVA_LONG, VerbsH.VCTX_SZ);
        if (sz < VerbsH.VERBS_CONTEXT.byteSize() - opOffset) {
            return MemorySegment.NULL;
        }
        return OpsTable.functionOrNull(vctx, opOffset);
    }

    private static int u16(MemorySegment s, java.lang.foreign.GroupLayout l, String name) {
        return Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT, offset(l, name)));
    }

    private static int u8(MemorySegment s, java.lang.foreign.GroupLayout l, String name) {
        return Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, offset(l, name)));
    }

    private static void checkPort(int port) {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port number " + port + " is out of range: ports are numbered from 1");
        }
    }

    /** {@code ibv_query_gid}: the 16 bytes of GID {@code index} of {@code port}. */
    public byte[] queryGid(int port, int index) {
        ensureOpen();
        checkPort(port);
        if (index < 0) {
            throw new IllegalArgumentException("GID index " + index + " is negative");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment gid = a.allocate(VerbsH.IBV_GID);
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) LibIbverbs.ibv_query_gid.handle().invokeExact(cap, ctx, (byte) port, index, gid);
            if (rc != 0) {
                int errno = Errno.read(cap);
                throw new VerbsException(
                        "ibv_query_gid", deviceName + ", port=" + port + ", index=" + index, errno == 0 ? 22 : errno);
            }
            return gid.toArray(ValueLayout.JAVA_BYTE);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_query_gid_table} (static inline over {@code _ibv_query_gid_table}): every valid GID with its type. */
    public List<GidEntry> gidTable() {
        ensureOpen();
        int max = 0;
        for (int p = 1; p <= Math.max(1, deviceAttr().physPortCnt()); p++) {
            max += Math.max(0, queryPort(p).gidTblLen());
        }
        try (Arena a = Arena.ofConfined()) {
            long es = VerbsH.IBV_GID_ENTRY.byteSize();
            MemorySegment entries = a.allocate(es * Math.max(1, max), 8);
            long n = (long) LibIbverbs._ibv_query_gid_table.handle().invokeExact(ctx, entries, (long) max, 0, es);
            if (n < 0) {
                throw new VerbsException("ibv_query_gid_table", deviceName, (int) -n);
            }
            List<GidEntry> out = new ArrayList<>();
            var L = VerbsH.IBV_GID_ENTRY;
            for (int k = 0; k < n; k++) {
                MemorySegment e = entries.asSlice(k * es, es);
                out.add(new GidEntry(
                        i(e, L, "gid_index"),
                        i(e, L, "port_num"),
                        i(e, L, "gid_type"),
                        e.asSlice(0, 16).toArray(ValueLayout.JAVA_BYTE),
                        i(e, L, "ndev_ifindex")));
            }
            return out;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * The index of the RoCE v2 GID with an IPv4-mapped address on {@code port} (what RoCE over IPv4 routes with), or
     * the first IPv4-mapped one of any type, or -1 when there is none (InfiniBand ports have no such GID).
     */
    public int findRoceV2Ipv4GidIndex(int port) {
        ensureOpen();
        int any = -1;
        for (GidEntry e : gidTable()) {
            if (e.port() == port && e.isIpv4Mapped()) {
                if (e.isRoceV2()) {
                    return e.index();
                }
                if (any < 0) {
                    any = e.index();
                }
            }
        }
        return any;
    }

    /** {@code ibv_alloc_pd}. */
    public ProtectionDomain allocPd() {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment pd = (MemorySegment) LibIbverbs.ibv_alloc_pd.handle().invokeExact(cap, ctx);
            if (Native.isNull(pd)) {
                throw new VerbsException("ibv_alloc_pd", deviceName, Errno.read(cap));
            }
            return new ProtectionDomain(this, pd);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_create_comp_channel}. */
    public CompletionChannel createCompletionChannel() {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment ch =
                    (MemorySegment) LibIbverbs.ibv_create_comp_channel.handle().invokeExact(cap, ctx);
            if (Native.isNull(ch)) {
                throw new VerbsException("ibv_create_comp_channel", deviceName, Errno.read(cap));
            }
            return new CompletionChannel(this, ch);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@code ibv_create_cq} without a completion channel. */
    public CompletionQueue createCq(int cqe) {
        ensureOpen();
        return createCq(cqe, null, 0);
    }

    /**
     * {@code ibv_create_cq}.
     *
     * @param cqe minimum number of entries
     * @param channel completion channel for events, or null
     * @param compVector completion vector, below {@link #numCompVectors()}
     */
    public CompletionQueue createCq(int cqe, CompletionChannel channel, int compVector) {
        ensureOpen();
        if (cqe < 1) {
            throw new IllegalArgumentException("a completion queue needs at least 1 entry, got " + cqe);
        }
        if (channel != null) {
            channel.ensureOpen();
            if (channel.context() != this) {
                throw new IllegalArgumentException(channel + " belongs to another context");
            }
        }
        if (compVector < 0 || compVector >= Math.max(1, numCompVectors())) {
            throw new IllegalArgumentException(
                    "completion vector " + compVector + " is out of range [0, " + numCompVectors() + ")");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment ch =
                    channel == null ? MemorySegment.NULL : channel.handle; // not inline: invokeExact would see Object
            MemorySegment cq = (MemorySegment)
                    LibIbverbs.ibv_create_cq.handle().invokeExact(cap, ctx, cqe, MemorySegment.NULL, ch, compVector);
            if (Native.isNull(cq)) {
                throw new VerbsException("ibv_create_cq", "cqe=" + cqe, Errno.read(cap));
            }
            return new CompletionQueue(this, channel, cq);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Waits up to {@code timeoutMs} for an asynchronous event ({@code ibv_get_async_event}) and acknowledges it.
     *
     * @return the event, or null on timeout
     */
    public AsyncEvent pollAsyncEvent(long timeoutMs) {
        ensureOpen();
        int fd = ctx.get(ValueLayout.JAVA_INT, VerbsH.CONTEXT_ASYNC_FD);
        if (!Poll.readable(fd, timeoutMs)) {
            return null;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ev = a.allocate(VerbsH.IBV_ASYNC_EVENT);
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) LibIbverbs.ibv_get_async_event.handle().invokeExact(cap, ctx, ev);
            if (rc != 0) {
                throw new VerbsException("ibv_get_async_event", deviceName, Errno.read(cap));
            }
            int type = ev.get(ValueLayout.JAVA_INT, offset(VerbsH.IBV_ASYNC_EVENT, "event_type"));
            long element = ev.get(ValueLayout.JAVA_LONG, 0);
            LibIbverbs.ibv_ack_async_event.handle().invokeExact(ev);
            return new AsyncEvent(type, element);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void destroy() {
        if (!owned) {
            return;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) LibIbverbs.ibv_close_device.handle().invokeExact(cap, ctx);
            if (rc != 0) {
                throw new VerbsException("ibv_close_device", deviceName, Errno.read(cap));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
