package io.rdma4j.ibverbs.cm;

import static io.rdma4j.ibverbs.ffi.RdmaCmaH.AF_INET;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CM_ID_PORT_NUM;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.CM_ID_VERBS;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.MAX_ACCEPT_PRIVATE_DATA;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.MAX_CONNECT_PRIVATE_DATA;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.MAX_REJECT_PRIVATE_DATA;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_DISCONNECTED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ESTABLISHED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_ID;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.SIN_ADDR;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.SIN_FAMILY;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.SIN_PORT;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.SOCKADDR_STORAGE;

import io.rdma4j.Closeables;
import io.rdma4j.ClosedException;
import io.rdma4j.ffi.Errno;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.QpInitAttr;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.VerbsException;
import io.rdma4j.ibverbs.ffi.LibRdmacm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An RDMA-CM identifier ({@code struct rdma_cm_id}): the socket-like handle that resolves an IP address to a device and
 * route, carries a queue pair, and connects, listens, accepts and disconnects. Operations are asynchronous: their
 * outcome arrives as an event on the {@link EventChannel}. IPv4 addresses only.
 */
public final class CmId implements AutoCloseable {
    /** librdmacm keeps one ibv_context per device; every id on it shares one wrapper so resources match across ids. */
    private static final Map<Long, Context> CONTEXTS = new ConcurrentHashMap<>();

    private final EventChannel channel;
    private final MemorySegment id;
    private volatile QueuePair qp;
    private volatile boolean closed;

    CmId(EventChannel channel, MemorySegment id) {
        this.channel = channel;
        this.id = id.reinterpret(RDMA_CM_ID.byteSize());
        channel.ids.put(id.address(), this);
    }

    /**
     * {@code rdma_create_id} on {@code channel} in port space {@code ps} ({@code RDMA_PS_TCP} for RC,
     * {@code RDMA_PS_UDP} for UD).
     */
    public static CmId create(EventChannel channel, int ps) {
        channel.ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int)
                    LibRdmacm.rdma_create_id.handle().invokeExact(cap, channel.channel, out, MemorySegment.NULL, ps);
            if (rc != 0) {
                throw new VerbsException("rdma_create_id", "ps=0x" + Integer.toHexString(ps), Errno.read(cap));
            }
            return new CmId(channel, out.get(ValueLayout.ADDRESS, 0));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    void ensureOpen() {
        if (closed) {
            throw new ClosedException("CmId");
        }
        channel.ensureOpen();
    }

    public boolean isClosed() {
        return closed;
    }

    /** @return the raw {@code struct rdma_cm_id *} */
    public MemorySegment handle() {
        ensureOpen();
        return id;
    }

    /** @return the device port the id is bound to (after address resolution or bind to a device address) */
    public int portNum() {
        ensureOpen();
        return Byte.toUnsignedInt(id.get(ValueLayout.JAVA_BYTE, CM_ID_PORT_NUM));
    }

    /**
     * The device context librdmacm opened for this id ({@code id->verbs}), set once the id is bound to a device (after
     * {@link #resolveAddr}, a bind to a device's address, or on a connect request). Create the PD and CQs on it.
     */
    public Context context() {
        ensureOpen();
        MemorySegment verbs = id.get(ValueLayout.ADDRESS, CM_ID_VERBS);
        if (verbs.equals(MemorySegment.NULL)) {
            throw new IllegalStateException(
                    "this CM id is not bound to a device yet: resolve its address (or bind to an RDMA interface's address) first");
        }
        return CONTEXTS.compute(
                verbs.address(), (k, c) -> c != null && !c.isClosed() ? c : Context.wrapUnowned(verbs, "rdma_cm"));
    }

    /** The queue pair created on this id, or null. */
    public QueuePair qp() {
        ensureOpen();
        return qp;
    }

    /** {@code rdma_bind_addr}. */
    public void bind(InetSocketAddress address) {
        ensureOpen();
        call("rdma_bind_addr", address.toString(), LibRdmacm.rdma_bind_addr.handle(), a ->
                new Object[] {id, sockaddr(a, address)});
    }

    /** {@code rdma_resolve_addr}: completes with ADDR_RESOLVED or ADDR_ERROR. {@code source} may be null. */
    public void resolveAddr(InetSocketAddress source, InetSocketAddress destination, int timeoutMs) {
        ensureOpen();
        call("rdma_resolve_addr", destination.toString(), LibRdmacm.rdma_resolve_addr.handle(), a -> new Object[] {
            id, source == null ? MemorySegment.NULL : sockaddr(a, source), sockaddr(a, destination), timeoutMs
        });
    }

    /** {@code rdma_resolve_route}: completes with ROUTE_RESOLVED or ROUTE_ERROR. */
    public void resolveRoute(int timeoutMs) {
        ensureOpen();
        call("rdma_resolve_route", "timeout_ms=" + timeoutMs, LibRdmacm.rdma_resolve_route.handle(), a ->
                new Object[] {id, timeoutMs});
    }

    /** {@code rdma_create_qp} with a PD and CQs of {@link #context()}; the QP is closed with this id. */
    public QueuePair createQp(ProtectionDomain pd, QpInitAttr init) {
        ensureOpen();
        if (qp != null && !qp.isClosed()) {
            throw new IllegalStateException("this CM id already has " + qp);
        }
        QueuePair q = pd.createQpOnCmId(id, init);
        qp = q;
        return q;
    }

    /** {@code rdma_connect}: completes with ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR. */
    public void connect(ConnParam param) {
        ensureOpen();
        call("rdma_connect", "", LibRdmacm.rdma_connect.handle(), a ->
                new Object[] {id, param.write(a, MAX_CONNECT_PRIVATE_DATA, "rdma_connect")});
    }

    /** {@code rdma_listen} (bind first). */
    public void listen(int backlog) {
        ensureOpen();
        call("rdma_listen", "backlog=" + backlog, LibRdmacm.rdma_listen.handle(), a -> new Object[] {id, backlog});
    }

    /** {@code rdma_accept} on an id from a CONNECT_REQUEST: completes with ESTABLISHED. */
    public void accept(ConnParam param) {
        ensureOpen();
        call("rdma_accept", "", LibRdmacm.rdma_accept.handle(), a ->
                new Object[] {id, param.write(a, MAX_ACCEPT_PRIVATE_DATA, "rdma_accept")});
    }

    /** {@code rdma_reject} with optional private data. */
    public void reject(byte[] privateData) {
        ensureOpen();
        byte[] p = privateData == null ? new byte[0] : privateData;
        if (p.length > MAX_REJECT_PRIVATE_DATA) {
            throw new IllegalArgumentException("rdma_reject carries at most " + MAX_REJECT_PRIVATE_DATA
                    + " bytes of private data, got " + p.length);
        }
        call("rdma_reject", "", LibRdmacm.rdma_reject.handle(), a -> new Object[] {
            id, p.length == 0 ? MemorySegment.NULL : a.allocateFrom(ValueLayout.JAVA_BYTE, p), (byte) p.length
        });
    }

    /** {@code rdma_disconnect}: both sides then get DISCONNECTED. */
    public void disconnect() {
        ensureOpen();
        call("rdma_disconnect", "", LibRdmacm.rdma_disconnect.handle(), a -> new Object[] {id});
    }

    void onEvent(int type) {
        QueuePair q = qp;
        if (q != null && !q.isClosed() && (type == RDMA_CM_EVENT_ESTABLISHED || type == RDMA_CM_EVENT_DISCONNECTED)) {
            q.refreshState(); // librdmacm moved the QP (to RTS, or to ERR)
        }
    }

    private interface Args {
        Object[] build(Arena a);
    }

    private void call(String name, String desc, MethodHandle h, Args args) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            Object[] rest = args.build(a);
            Object[] all = new Object[rest.length + 1];
            all[0] = cap;
            System.arraycopy(rest, 0, all, 1, rest.length);
            int rc = (int) h.invokeWithArguments(all);
            if (rc != 0) {
                throw new VerbsException(name, desc, Errno.read(cap));
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static MemorySegment sockaddr(Arena a, InetSocketAddress address) {
        if (address.isUnresolved() || !(address.getAddress() instanceof Inet4Address v4)) {
            throw new IllegalArgumentException("RDMA-CM addresses here are IPv4 (sockaddr_in); got " + address);
        }
        MemorySegment s = a.allocate(SOCKADDR_STORAGE);
        s.set(ValueLayout.JAVA_SHORT, SIN_FAMILY, (short) AF_INET);
        s.set(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), SIN_PORT, (short) address.getPort());
        MemorySegment.copy(v4.getAddress(), 0, s, ValueLayout.JAVA_BYTE, SIN_ADDR, 4);
        return s;
    }

    /** Destroys the QP on this id ({@code rdma_destroy_qp}) and the id ({@code rdma_destroy_id}); idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        // a queue pair that fails to close must neither keep the id alive nor hide the id's own failure
        Closeables.closeAll(qp, this::destroy);
    }

    private void destroy() {
        channel.ids.remove(id.address());
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) LibRdmacm.rdma_destroy_id.handle().invokeExact(cap, id);
            if (rc != 0) {
                throw new VerbsException("rdma_destroy_id", "", Errno.read(cap));
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
