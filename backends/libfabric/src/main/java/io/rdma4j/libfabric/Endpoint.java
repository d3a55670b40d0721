package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FID_OPS;
import static io.rdma4j.libfabric.ffi.FabricH.FI_ADDR_UNSPEC;
import static io.rdma4j.libfabric.ffi.FabricH.FI_COMPLETION;
import static io.rdma4j.libfabric.ffi.FabricH.FI_CONTEXT;
import static io.rdma4j.libfabric.ffi.FabricH.FI_CONTEXT2;
import static io.rdma4j.libfabric.ffi.FabricH.FI_ENABLE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_RECV;
import static io.rdma4j.libfabric.ffi.FabricH.FI_TRANSMIT;
import static io.rdma4j.libfabric.ffi.FabricH.OPS_BIND;
import static io.rdma4j.libfabric.ffi.FabricH.OPS_CONTROL;
import static io.rdma4j.libfabric.ffi.FiDomainH.DOMAIN_OPS;
import static io.rdma4j.libfabric.ffi.FiDomainH.IOVEC;
import static io.rdma4j.libfabric.ffi.FiDomainH.IOVEC_BASE;
import static io.rdma4j.libfabric.ffi.FiDomainH.IOVEC_LEN;
import static io.rdma4j.libfabric.ffi.FiDomainH.OPS_DOMAIN_ENDPOINT;
import static io.rdma4j.libfabric.ffi.FiEndpointH.EP_CM;
import static io.rdma4j.libfabric.ffi.FiEndpointH.EP_MSG;
import static io.rdma4j.libfabric.ffi.FiEndpointH.EP_RMA;
import static io.rdma4j.libfabric.ffi.FiEndpointH.FI_MSG_RMA;
import static io.rdma4j.libfabric.ffi.FiEndpointH.FI_RMA_IOV;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_ADDR;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_CONTEXT;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_DATA;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_DESC;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_IOV_COUNT;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_MSG_IOV;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_RMA_IOV;
import static io.rdma4j.libfabric.ffi.FiEndpointH.MSG_RMA_RMA_IOV_COUNT;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_CM_GETNAME;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_MSG_INJECT;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_MSG_RECV;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_MSG_SEND;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_RMA_INJECT;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_RMA_READ;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_RMA_WRITE;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_RMA_WRITEDATA;
import static io.rdma4j.libfabric.ffi.FiEndpointH.OPS_RMA_WRITEMSG;
import static io.rdma4j.libfabric.ffi.FiEndpointH.RMA_IOV_ADDR;
import static io.rdma4j.libfabric.ffi.FiEndpointH.RMA_IOV_KEY;
import static io.rdma4j.libfabric.ffi.FiEndpointH.RMA_IOV_LEN;

import io.rdma4j.ffi.OpsTable;
import io.rdma4j.libfabric.ffi.Fi;
import io.rdma4j.libfabric.ffi.FiErrnoH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A reliable-datagram endpoint ({@code fi_endpoint}, {@code FI_EP_RDM}) bound to one completion queue and one address
 * vector.
 *
 * <p>Data path: {@link #write}, {@link #writeData}, {@link #writeMsg}, {@link #read}, {@link #send}, {@link #recv},
 * {@link #inject} and {@link #injectWrite} call the provider's ops table directly and allocate nothing. They return 0
 * when the operation was posted, {@link #BACK_PRESSURED} when the provider is out of resources (poll the completion
 * queue, then retry), or another negative {@code -FI_*} code ({@link Libfabric#statusText}). Misuse (a closed endpoint,
 * a range outside the local or remote region, an unknown peer, a freed segment) throws before any native call.
 *
 * <p>{@code context} is a caller's number (a wr_id) that comes back in {@link Completions#context(int)}; for providers
 * that require {@code FI_CONTEXT}/{@code FI_CONTEXT2} mode the endpoint passes a slot of its own context memory instead
 * and the completion queue maps it back, so callers see the same numbers either way.
 *
 * <p>Completion of a write at the initiator does not mean the bytes are visible at the target: use {@link #writeData}
 * for the write whose arrival matters and wait for its remote CQ data at the target.
 *
 * <p>Threads: post from one thread at a time; the completion queue may be polled from another. Close an endpoint (or
 * anything above it) only once no other thread is posting on it: a post that races with close may reach freed provider
 * memory.
 */
public final class Endpoint extends FabricResource {
    /** {@code -FI_EAGAIN}: the provider cannot take the operation now; progress the completion queue and retry. */
    public static final long BACK_PRESSURED = -FiErrnoH.FI_EAGAIN;
    /** The operation was posted. */
    public static final long OK = 0;
    /** The most pieces {@link #writeMsg} takes whatever the provider allows. */
    public static final int MAX_VECTOR = 16;

    /** Native bytes per piece of {@link #writeMsg}: its iovec, descriptor and RMA iov. */
    private static final long PIECE_BYTES = IOVEC.byteSize() + 8 + FI_RMA_IOV.byteSize();

    /** {@code FI_ADDR_UNSPEC}: for {@link #recv}, a message from any peer. */
    public static final long ANY_PEER = FI_ADDR_UNSPEC;

    private final Domain domain;
    private final CompletionQueue cq;
    private final AddressVector av;
    private final long ep;
    private final long maxMsgSize;
    private final long injectSize;
    private final long cqDataSize;
    private final MemorySegment rmaRead;
    private final MemorySegment rmaWrite;
    private final MemorySegment rmaWriteData;
    private final MemorySegment rmaInject;
    private final MemorySegment rmaWriteMsg;
    /** The most pieces one {@link #writeMsg} takes: the provider's iov and RMA iov limits, at most 16. */
    private final int vectorLimit;
    /** {@link #writeMsg}'s {@code fi_msg_rma}, then its iovecs, descriptors and RMA iovs; rewritten by every call. */
    private final MemorySegment message;

    private final MemorySegment msgSend;
    private final MemorySegment msgRecv;
    private final MemorySegment msgInject;

    private final ContextPool pool;

    Endpoint(Domain domain, CompletionQueue cq, AddressVector av, boolean forceContextPool) {
        super("endpoint", domain);
        this.domain = domain;
        this.cq = cq;
        this.av = av;
        Info info = domain.info();
        this.maxMsgSize = info.maxMsgSize();
        this.injectSize = info.injectSize();
        this.cqDataSize = info.cqDataSize();
        long dom = domain.fid();
        long cqFid = cq.fid();
        long avFid = av.fid();
        MemorySegment fn = Fi.op(dom + DOMAIN_OPS, OPS_DOMAIN_ENDPOINT, "fi_endpoint");
        final long e;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            long infoAddress = domain.fabric().infoAddress();
            int rc = guarded("fi_endpoint", () -> (int) Fi.OPEN_WITH_INFO.invokeExact(fn, dom, infoAddress, out, 0L));
            if (rc != 0) {
                throw FabricException.of("fi_endpoint", info.provider(), rc, null);
            }
            e = out.get(ValueLayout.JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        try {
            // fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV); fi_ep_bind(ep, &av->fid, 0); fi_enable(ep)
            check(
                    "fi_ep_bind",
                    "cq, FI_TRANSMIT|FI_RECV",
                    guarded("fi_ep_bind", () -> bind(e, cqFid, FI_TRANSMIT | FI_RECV)));
            check("fi_ep_bind", "av", guarded("fi_ep_bind", () -> bind(e, avFid, 0)));
            MemorySegment control = Fi.op(e + FID_OPS, OPS_CONTROL, "fi_enable");
            check("fi_enable", "", guarded("fi_enable", () -> (int) Fi.CONTROL.invokeExact(control, e, FI_ENABLE, 0L)));
        } catch (Throwable t) {
            fiClose(e);
            throw rethrow(t);
        }
        this.ep = e;
        MemorySegment rma = MemorySegment.ofAddress(Fi.getLong(e + EP_RMA));
        MemorySegment msg = MemorySegment.ofAddress(Fi.getLong(e + EP_MSG));
        this.rmaRead = OpsTable.functionOrNull(rma, OPS_RMA_READ);
        this.rmaWrite = OpsTable.functionOrNull(rma, OPS_RMA_WRITE);
        this.rmaWriteData = OpsTable.functionOrNull(rma, OPS_RMA_WRITEDATA);
        this.rmaInject = OpsTable.functionOrNull(rma, OPS_RMA_INJECT);
        this.rmaWriteMsg = OpsTable.functionOrNull(rma, OPS_RMA_WRITEMSG);
        this.vectorLimit = rmaWriteMsg.equals(MemorySegment.NULL)
                ? 0
                : (int) Math.clamp(Math.min(info.iovLimit(), info.rmaIovLimit()), 0, MAX_VECTOR);
        this.message = Arena.ofAuto().allocate(FI_MSG_RMA.byteSize() + MAX_VECTOR * PIECE_BYTES, 8);
        this.msgSend = OpsTable.functionOrNull(msg, OPS_MSG_SEND);
        this.msgRecv = OpsTable.functionOrNull(msg, OPS_MSG_RECV);
        this.msgInject = OpsTable.functionOrNull(msg, OPS_MSG_INJECT);
        boolean contextMode = (info.mode() & (FI_CONTEXT | FI_CONTEXT2)) != 0;
        this.pool = contextMode || forceContextPool
                ? new ContextPool(Math.clamp(info.txSize() + info.rxSize(), 256, 1 << 16))
                : null;
        cq.bound.add(this);
        av.bound.add(this);
        if (pool != null) {
            cq.addPool(pool);
        }
        opened(e);
    }

    private static int bind(long fid, long bfid, long flags) throws Throwable {
        MemorySegment fn = Fi.op(fid + FID_OPS, OPS_BIND, "fi_ep_bind");
        return (int) Fi.BIND.invokeExact(fn, fid, bfid, flags);
    }

    private static void check(String function, String args, int rc) {
        if (rc != 0) {
            throw FabricException.of(function, args, rc, null);
        }
    }

    @Override
    int closeRank() {
        return 0;
    }

    @Override
    void afterClose() {
        cq.bound.remove(this);
        av.bound.remove(this);
        if (pool != null) {
            cq.removePool(pool);
            pool.close();
        }
    }

    /** @return the FI_CONTEXT slots this endpoint hands the provider, or null when contexts pass through as numbers */
    ContextPool contextPool() {
        return pool;
    }

    /** The context pointer for an operation: the caller's number, or a slot for FI_CONTEXT providers (0: none free). */
    private long acquire(long context) {
        return pool == null ? context : pool.acquire(context);
    }

    private long posted(long rc, long nativeContext) {
        if (rc != 0 && pool != null) {
            pool.release(nativeContext);
        }
        return rc;
    }

    public Domain domain() {
        return domain;
    }

    public CompletionQueue completionQueue() {
        return cq;
    }

    public AddressVector addressVector() {
        return av;
    }

    /** {@code fi_getname}: this endpoint's address, to give to peers for their {@link AddressVector#insert}. */
    public byte[] name() {
        long e = fid();
        MemorySegment fn = Fi.op(e + EP_CM, OPS_CM_GETNAME, "fi_getname");
        try (Arena arena = Arena.ofConfined()) {
            long size = 256;
            for (int attempt = 0; attempt < 2; attempt++) {
                MemorySegment buf = arena.allocate(size);
                MemorySegment len = arena.allocate(ValueLayout.JAVA_LONG);
                len.set(ValueLayout.JAVA_LONG, 0, size);
                int rc = (int) Fi.CM_GETNAME.invokeExact(fn, e, buf, len);
                long got = len.get(ValueLayout.JAVA_LONG, 0);
                if (rc == -FiErrnoH.FI_ETOOSMALL && got > size && got < (1 << 20)) {
                    size = got;
                    continue;
                }
                check("fi_getname", "", rc);
                return buf.asSlice(0, Math.min(got, size)).toArray(ValueLayout.JAVA_BYTE);
            }
            throw new FabricException("fi_getname", "", FiErrnoH.FI_ETOOSMALL, null);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private void checkOp(MemoryRegion local, long peer, MemorySegment fn, String op) {
        fid();
        if (local.domain() != domain) {
            throw new IllegalArgumentException(
                    op + ": the memory region belongs to another domain; register it with this endpoint's domain");
        }
        if (!av.isValidPeer(peer)) {
            throw new IllegalArgumentException(op + ": peer " + peer + " is not in this endpoint's address vector ("
                    + av.count() + " inserted): use the value AddressVector.insert returned");
        }
        if (fn.equals(MemorySegment.NULL)) {
            throw new UnsupportedOperationException(
                    op + " is not implemented by provider " + domain.info().provider());
        }
    }

    private void checkLength(long length, String op) {
        if (Long.compareUnsigned(length, maxMsgSize) > 0) {
            throw new IllegalArgumentException(op + ": " + length + " bytes exceed the provider's max_msg_size "
                    + Long.toUnsignedString(maxMsgSize));
        }
    }

    /**
     * {@code fi_write}: copies {@code length} bytes at {@code localOffset} of {@code local} to {@code remoteOffset} of
     * the peer's region. {@code static inline ssize_t fi_write(ep, buf, len, desc, dest_addr, addr, key, context) {
     * return ep->rma->write(ep, buf, len, desc, dest_addr, addr, key, context); }}
     *
     * @return {@link #OK}, {@link #BACK_PRESSURED}, or another negative {@code -FI_*} code
     */
    public long write(
            MemoryRegion local,
            long localOffset,
            long length,
            long peer,
            RemoteRegion remote,
            long remoteOffset,
            long context) {
        checkOp(local, peer, rmaWrite, "fi_write");
        checkLength(length, "fi_write");
        long buf = local.checkedAddress(localOffset, length, "fi_write");
        long raddr = remote.addressOf(remoteOffset, length);
        try {
            long c = acquire(context);
            if (c == 0 && pool != null) {
                return BACK_PRESSURED;
            }
            return posted(
                    (long) Fi.RMA.invokeExact(
                            rmaWrite, ep, buf, length, local.descriptor(), peer, raddr, remote.key(), c),
                    c);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    /**
     * {@code fi_writedata}: a write that also delivers {@code data} to the target's completion queue (remote CQ data).
     * The target sees the completion only after the bytes are in place, so it is the way to tell the target that data
     * is visible.
     *
     * @return {@link #OK}, {@link #BACK_PRESSURED}, or another negative {@code -FI_*} code
     */
    public long writeData(
            MemoryRegion local,
            long localOffset,
            long length,
            long data,
            long peer,
            RemoteRegion remote,
            long remoteOffset,
            long context) {
        checkOp(local, peer, rmaWriteData, "fi_writedata");
        checkLength(length, "fi_writedata");
        checkData(data);
        long buf = local.checkedAddress(localOffset, length, "fi_writedata");
        long raddr = remote.addressOf(remoteOffset, length);
        try {
            long c = acquire(context);
            if (c == 0 && pool != null) {
                return BACK_PRESSURED;
            }
            return posted(
                    (long) Fi.RMA_WRITEDATA.invokeExact(
                            rmaWriteData, ep, buf, length, local.descriptor(), data, peer, raddr, remote.key(), c),
                    c);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    /**
     * The most pieces one {@link #writeMsg} takes on this endpoint: the provider's {@code iov_limit} and
     * {@code rma_iov_limit}, at most {@link #MAX_VECTOR}; 0 where the provider has no {@code fi_writemsg}.
     */
    public int vectorLimit() {
        return vectorLimit;
    }

    /**
     * {@code fi_writemsg} of {@code count} pieces in one operation, one completion: piece {@code i} copies
     * {@code lengths[from + i]} bytes at {@code localOffsets[from + i]} of {@code local} to {@code remoteOffsets[from +
     * i]} of the peer's region. The provider writes the local pieces, one after the other, into the remote ones, one
     * after the other; each piece's local and remote lengths are the same, so each lands where it is named. Scattered
     * blocks go out as one operation: one message on tcp, one command on shm (through its inject buffer when they total
     * at most 4 KiB, else one cross-memory copy by the target). Allocates nothing: the message is built in native
     * memory the endpoint keeps.
     *
     * @param count 1 to {@link #vectorLimit()}
     * @return {@link #OK}, {@link #BACK_PRESSURED}, or another negative {@code -FI_*} code
     */
    public long writeMsg(
            MemoryRegion local,
            long[] localOffsets,
            long[] remoteOffsets,
            long[] lengths,
            int from,
            int count,
            long peer,
            RemoteRegion remote,
            long context) {
        checkOp(local, peer, rmaWriteMsg, "fi_writemsg");
        if (count < 1 || count > vectorLimit) {
            throw new IllegalArgumentException("fi_writemsg: " + count + " pieces; this endpoint takes 1 to "
                    + vectorLimit + " (the provider's iov_limit and rma_iov_limit)");
        }
        if (from < 0
                || from > lengths.length - count
                || from > localOffsets.length - count
                || from > remoteOffsets.length - count) {
            throw new IndexOutOfBoundsException("fi_writemsg: pieces " + from + ".." + (from + count - 1)
                    + " are outside the arrays (lengths " + lengths.length + ", local offsets "
                    + localOffsets.length + ", remote offsets " + remoteOffsets.length + ")");
        }
        MemorySegment m = message;
        long iovs = FI_MSG_RMA.byteSize();
        long descs = iovs + MAX_VECTOR * IOVEC.byteSize();
        long rmaIovs = descs + MAX_VECTOR * 8L;
        long total = 0;
        long desc = local.descriptor();
        for (int i = 0; i < count; i++) {
            long length = lengths[from + i];
            long buf = local.checkedAddress(localOffsets[from + i], length, "fi_writemsg");
            long raddr = remote.addressOf(remoteOffsets[from + i], length);
            total += length;
            m.set(ValueLayout.JAVA_LONG, iovs + i * IOVEC.byteSize() + IOVEC_BASE, buf);
            m.set(ValueLayout.JAVA_LONG, iovs + i * IOVEC.byteSize() + IOVEC_LEN, length);
            m.set(ValueLayout.JAVA_LONG, descs + i * 8L, desc);
            m.set(ValueLayout.JAVA_LONG, rmaIovs + i * FI_RMA_IOV.byteSize() + RMA_IOV_ADDR, raddr);
            m.set(ValueLayout.JAVA_LONG, rmaIovs + i * FI_RMA_IOV.byteSize() + RMA_IOV_LEN, length);
            m.set(ValueLayout.JAVA_LONG, rmaIovs + i * FI_RMA_IOV.byteSize() + RMA_IOV_KEY, remote.key());
        }
        checkLength(total, "fi_writemsg");
        long base = m.address();
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_MSG_IOV, base + iovs);
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_DESC, base + descs);
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_IOV_COUNT, count);
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_ADDR, peer);
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV, base + rmaIovs);
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV_COUNT, count);
        m.set(ValueLayout.JAVA_LONG, MSG_RMA_DATA, 0);
        try {
            long c = acquire(context);
            if (c == 0 && pool != null) {
                return BACK_PRESSURED;
            }
            m.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, c);
            return posted((long) Fi.RMA_MSG.invokeExact(rmaWriteMsg, ep, base, FI_COMPLETION), c);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
            java.lang.ref.Reference.reachabilityFence(m);
        }
    }

    /**
     * {@code fi_read}: copies {@code length} bytes at {@code remoteOffset} of the peer's region into {@code local}.
     *
     * @return {@link #OK}, {@link #BACK_PRESSURED}, or another negative {@code -FI_*} code
     */
    public long read(
            MemoryRegion local,
            long localOffset,
            long length,
            long peer,
            RemoteRegion remote,
            long remoteOffset,
            long context) {
        checkOp(local, peer, rmaRead, "fi_read");
        checkLength(length, "fi_read");
        long buf = local.checkedAddress(localOffset, length, "fi_read");
        long raddr = remote.addressOf(remoteOffset, length);
        try {
            long c = acquire(context);
            if (c == 0 && pool != null) {
                return BACK_PRESSURED;
            }
            return posted(
                    (long) Fi.RMA.invokeExact(
                            rmaRead, ep, buf, length, local.descriptor(), peer, raddr, remote.key(), c),
                    c);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    /**
     * {@code fi_inject_write}: a write of at most {@link Info#injectSize()} bytes whose source buffer is free again on
     * return; it produces no completion at the initiator.
     */
    public long injectWrite(
            MemoryRegion local, long localOffset, long length, long peer, RemoteRegion remote, long remoteOffset) {
        checkOp(local, peer, rmaInject, "fi_inject_write");
        checkInject(length, "fi_inject_write");
        long buf = local.checkedAddress(localOffset, length, "fi_inject_write");
        long raddr = remote.addressOf(remoteOffset, length);
        try {
            return (long) Fi.RMA_INJECT.invokeExact(rmaInject, ep, buf, length, peer, raddr, remote.key());
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    /** {@code fi_send}: a message to {@code peer}, matched by one of its posted {@link #recv}s. */
    public long send(MemoryRegion local, long offset, long length, long peer, long context) {
        checkOp(local, peer, msgSend, "fi_send");
        checkLength(length, "fi_send");
        long buf = local.checkedAddress(offset, length, "fi_send");
        try {
            long c = acquire(context);
            if (c == 0 && pool != null) {
                return BACK_PRESSURED;
            }
            return posted((long) Fi.MSG.invokeExact(msgSend, ep, buf, length, local.descriptor(), peer, c), c);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    /**
     * {@code fi_recv}: posts a buffer for one incoming message from {@code peer}, or from anyone with
     * {@link #ANY_PEER}.
     */
    public long recv(MemoryRegion local, long offset, long length, long peer, long context) {
        fid();
        if (peer != FI_ADDR_UNSPEC) {
            checkOp(local, peer, msgRecv, "fi_recv");
        } else if (local.domain() != domain) {
            throw new IllegalArgumentException("fi_recv: the memory region belongs to another domain");
        } else if (msgRecv.equals(MemorySegment.NULL)) {
            throw new UnsupportedOperationException(
                    "fi_recv is not implemented by provider " + domain.info().provider());
        }
        long buf = local.checkedAddress(offset, length, "fi_recv");
        try {
            long c = acquire(context);
            if (c == 0 && pool != null) {
                return BACK_PRESSURED;
            }
            return posted((long) Fi.MSG.invokeExact(msgRecv, ep, buf, length, local.descriptor(), peer, c), c);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    /**
     * {@code fi_inject}: a message of at most {@link Info#injectSize()} bytes, buffer reusable on return, no
     * completion.
     */
    public long inject(MemoryRegion local, long offset, long length, long peer) {
        checkOp(local, peer, msgInject, "fi_inject");
        checkInject(length, "fi_inject");
        long buf = local.checkedAddress(offset, length, "fi_inject");
        try {
            return (long) Fi.MSG_INJECT.invokeExact(msgInject, ep, buf, length, peer);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            java.lang.ref.Reference.reachabilityFence(local);
        }
    }

    private void checkInject(long length, String op) {
        if (length < 0 || length > injectSize) {
            throw new IllegalArgumentException(op + ": " + length + " bytes exceed the provider's inject_size "
                    + injectSize + "; use write/send for larger transfers");
        }
    }

    private void checkData(long data) {
        if (cqDataSize < 8 && (cqDataSize == 0 || data >>> (8 * cqDataSize) != 0)) {
            throw new IllegalArgumentException("fi_writedata: remote CQ data 0x" + Long.toHexString(data)
                    + " does not fit the provider's " + cqDataSize + "-byte cq_data_size");
        }
    }
}
