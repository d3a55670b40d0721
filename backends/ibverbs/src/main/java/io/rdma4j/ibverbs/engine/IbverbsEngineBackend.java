package io.rdma4j.ibverbs.engine;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_LOCAL_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_LINK_LAYER_ETHERNET;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_ERR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_INIT;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RESET;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_SUCCESS;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE_WITH_IMM;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.ibverbs.CompletionQueue;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.PortAttr;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.QpAttr;
import io.rdma4j.ibverbs.QpInfo;
import io.rdma4j.ibverbs.QpInitAttr;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.RecvWr;
import io.rdma4j.ibverbs.SendWr;
import io.rdma4j.ibverbs.Verbs;
import io.rdma4j.ibverbs.VerbsException;
import io.rdma4j.ibverbs.WorkCompletions;
import io.rdma4j.topology.NicAttributes;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * RC queue pairs over libibverbs as engine lanes. Each lane has its own completion queue and one RC queue pair per
 * connection; several lanes share a device's protection domain and memory registrations.
 *
 * <p><b>Selective signaling.</b> Only every {@code k}-th send request (k = a quarter of the send queue) is signaled; RC
 * completes in order, so a signaled completion also completes every earlier request of its queue pair. Contexts live in
 * a per-connection ring of primitive longs indexed by a sequence number carried in {@code wr_id}. When a lane goes
 * quiet with unsignaled requests outstanding, {@link #poll} posts a signaled zero-length request behind them so they
 * complete. The send queue is bounded: posting returns {@link #BACK_PRESSURED} when it is full.
 *
 * <p><b>Errors.</b> An error completion marks the lane failed (posting returns {@link #FAILED}) and reports every
 * context still outstanding on that connection as failed. {@link #recover} rebuilds the lane's queue pairs in place
 * (RESET, then INIT, RTR, RTS towards the same peer, which recovers its side likewise).
 */
final class IbverbsEngineBackend implements EngineBackend {
    private static final int ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    private static final long RECV_TAG = 1L << 62;
    static final int PORT = 1;

    private final List<Device> devices = new ArrayList<>();
    private final List<Lane> lanes = new ArrayList<>();
    private final List<LaneDescriptor> descriptors = new ArrayList<>();
    /**
     * Handle -> registration, copy-on-write: control threads replace the array under this backend's lock, progress
     * threads read it without one (a slot is null once its registration closed).
     */
    private volatile Registration[] registrations = new Registration[0];

    private final int queueDepth;
    private volatile boolean closed;

    private static final class Device {
        final int index;
        final Context ctx;
        final ProtectionDomain pd;
        final int gidIndex;
        final PortAttr port;

        Device(int index, Context ctx) {
            this.index = index;
            this.ctx = ctx;
            this.pd = ctx.allocPd();
            this.port = ctx.queryPort(PORT);
            this.gidIndex = port.linkLayer() == IBV_LINK_LAYER_ETHERNET ? ctx.findRoceV2Ipv4GidIndex(PORT) : -1;
        }
    }

    IbverbsEngineBackend(List<String> deviceNames, BackendConfig config) {
        this.queueDepth = config.queueDepth();
        Function<String, NicAttributes> topology = NicAttributes.scanLive();
        try {
            for (String name : deviceNames) {
                Device d = new Device(devices.size(), Verbs.openDevice(name));
                devices.add(d);
                int sq = Math.max(4, Math.min(queueDepth, d.ctx.deviceAttr().maxQpWr()));
                NicAttributes nic = topology.apply(name);
                // sysfs's rate is what the kernel derives from these same codes; the verbs query covers a device
                // that sysfs does not describe
                double rate = nic.rateGbps() == NicAttributes.UNKNOWN_RATE_GBPS && gbps(d.port) > 0
                        ? gbps(d.port)
                        : nic.rateGbps();
                for (int l = 0; l < config.lanesPerDevice(); l++) {
                    int idx = lanes.size();
                    lanes.add(new Lane(idx, d, sq, queueDepth));
                    descriptors.add(new LaneDescriptor(
                            idx, name, nic.pciAddress(), nic.numaNode(), rate, Math.max(1, d.port.maxMsgSz())));
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Link speed from the port's active width and speed codes (IBTA encodings); 0 when unknown. */
    static double gbps(PortAttr p) {
        int lanesCount = switch (p.activeWidth()) {
            case 1 -> 1;
            case 2 -> 4;
            case 4 -> 8;
            case 8 -> 12;
            case 16 -> 2;
            default -> 0;
        };
        double perLane = switch (p.activeSpeed()) {
            case 1 -> 2.5;
            case 2 -> 5;
            case 4, 8 -> 10;
            case 16 -> 14;
            case 32 -> 25;
            case 64 -> 50;
            case 128 -> 100;
            default -> 0;
        };
        return lanesCount * perLane;
    }

    @Override
    public String name() {
        return "ibverbs";
    }

    @Override
    public String description() {
        return "libibverbs RC on "
                + devices.stream().map(d -> d.ctx.deviceName()).toList() + ", " + lanes.size() + " lanes";
    }

    @Override
    public List<LaneDescriptor> lanes() {
        return List.copyOf(descriptors);
    }

    @Override
    public int immediateBytes() {
        return 4;
    }

    private void ensureOpen() {
        if (closed) {
            throw new io.rdma4j.ClosedException("ibverbs engine backend");
        }
    }

    private Lane lane(int lane) {
        if (lane < 0 || lane >= lanes.size()) {
            throw new IndexOutOfBoundsException("lane " + lane + " is outside [0, " + lanes.size() + ")");
        }
        return lanes.get(lane);
    }

    @Override
    public synchronized BackendRegistration register(MemorySegment segment) {
        ensureOpen();
        MemoryRegion[] mrs = new MemoryRegion[devices.size()];
        try {
            for (Device d : devices) {
                mrs[d.index] = d.pd.register(segment, ACCESS);
            }
        } catch (RuntimeException e) {
            for (MemoryRegion m : mrs) {
                if (m != null) {
                    m.close();
                }
            }
            throw e;
        }
        return add(segment.address(), segment.byteSize(), mrs);
    }

    /**
     * Registers GPU memory on every device's protection domain through {@link ProtectionDomain#registerDevice}: dma-buf
     * first, then {@code ibv_reg_mr} on the device address (nvidia_peermem); the one error naming both paths otherwise.
     */
    @Override
    public synchronized BackendRegistration registerDevice(DeviceMemory memory) {
        ensureOpen();
        MemoryRegion[] mrs = new MemoryRegion[devices.size()];
        try {
            for (Device d : devices) {
                mrs[d.index] = d.pd.registerDevice(memory, ACCESS);
            }
        } catch (RuntimeException e) {
            for (MemoryRegion m : mrs) {
                if (m != null) {
                    m.close();
                }
            }
            throw e;
        }
        return add(memory.address(), memory.length(), mrs);
    }

    /** Called under this backend's lock. */
    private Registration add(long address, long length, MemoryRegion[] mrs) {
        Registration[] table = registrations;
        int handle = 0;
        while (handle < table.length && table[handle] != null) {
            handle++;
        }
        Registration r = new Registration(handle, address, length, mrs);
        Registration[] next = Arrays.copyOf(table, Math.max(table.length, handle + 1));
        next[handle] = r;
        registrations = next;
        return r;
    }

    private final class Registration implements BackendRegistration {
        final int handle;
        final long address;
        final long length;
        final MemoryRegion[] mrs;
        volatile boolean closed;

        Registration(int handle, long address, long length, MemoryRegion[] mrs) {
            this.handle = handle;
            this.address = address;
            this.length = length;
            this.mrs = mrs;
        }

        @Override
        public int handle() {
            return handle;
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public long remoteAddress(int lane) {
            return address;
        }

        @Override
        public long remoteKey(int lane) {
            return Integer.toUnsignedLong(mrs[lane(lane).device.index].rkey());
        }

        @Override
        public void close() {
            synchronized (IbverbsEngineBackend.this) {
                if (closed) {
                    return;
                }
                closed = true;
                // unpublish first: a post racing with the close finds no registration instead of a closed region
                Registration[] next = registrations.clone();
                next[handle] = null;
                registrations = next;
                for (MemoryRegion m : mrs) {
                    m.close();
                }
            }
        }
    }

    /** @return the registration of {@code localHandle} covering the local range, or null after recording why not */
    private MemoryRegion mr(Lane l, int localHandle, long localAddress, long length) {
        Registration[] table = registrations;
        Registration r = localHandle >= 0 && localHandle < table.length ? table[localHandle] : null;
        if (r == null || r.closed) {
            l.error = "lane " + l.index + ": no registration with handle " + localHandle + " (never made, or closed)";
            return null;
        }
        if (length < 0 || localAddress < r.address || localAddress - r.address > r.length - length) {
            l.error = "lane " + l.index + ": local range [0x" + Long.toHexString(localAddress) + ", +" + length
                    + ") is outside registration " + localHandle + " ([0x" + Long.toHexString(r.address) + ", +"
                    + r.length + "))";
            return null;
        }
        return r.mrs[l.device.index];
    }

    @Override
    public int prepareConnection(int lane) {
        ensureOpen();
        return lane(lane).prepare();
    }

    @Override
    public byte[] endpointInfo(int lane, int connection) {
        ensureOpen();
        Lane l = lane(lane);
        return Verbs.localQpInfo(l.conn(connection).qp, PORT, l.device.gidIndex).encode();
    }

    @Override
    public void connect(int lane, int connection, byte[] remoteEndpointInfo) {
        ensureOpen();
        QpInfo remote = QpInfo.decode(remoteEndpointInfo);
        Lane l = lane(lane);
        Conn c = l.conn(connection);
        Verbs.connectRc(c.qp, remote, PORT, l.device.gidIndex, ACCESS);
        c.remote = remote;
    }

    @Override
    public void disconnect(int lane, int connection) {
        ensureOpen();
        lane(lane).disconnect(connection);
    }

    @Override
    public int postWrite(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        return post(
                lane,
                connection,
                IBV_WR_RDMA_WRITE,
                localHandle,
                localAddress,
                length,
                remoteAddress,
                remoteKey,
                0,
                context);
    }

    @Override
    public int postWriteImmediate(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int immediate,
            long context) {
        return post(
                lane,
                connection,
                IBV_WR_RDMA_WRITE_WITH_IMM,
                localHandle,
                localAddress,
                length,
                remoteAddress,
                remoteKey,
                immediate,
                context);
    }

    @Override
    public int postRead(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        return post(
                lane,
                connection,
                IBV_WR_RDMA_READ,
                localHandle,
                localAddress,
                length,
                remoteAddress,
                remoteKey,
                0,
                context);
    }

    /**
     * The one way into a lane's send path: never throws (the engine holds a slot for the operation and gives it back
     * only on a returned status), so every check and every unexpected failure becomes {@link #FAILED} with a reason.
     */
    private int post(
            int lane,
            int connection,
            int opcode,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int imm,
            long context) {
        if (lane < 0 || lane >= lanes.size()) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        Lane l = lanes.get(lane);
        if (closed) {
            l.error = "lane " + lane + ": the ibverbs engine backend is closed";
            return FAILED;
        }
        try {
            MemoryRegion mr = mr(l, localHandle, localAddress, length);
            if (mr == null) {
                return FAILED;
            }
            return l.post(connection, opcode, mr, localAddress, length, remoteAddress, remoteKey, imm, context);
        } catch (RuntimeException e) {
            l.error = "lane " + lane + ": posting failed: " + e;
            return FAILED;
        }
    }

    @Override
    public int poll(int lane, Completions out) {
        if (closed) {
            out.clear();
            return 0;
        }
        return lane(lane).poll(out);
    }

    @Override
    public String laneError(int lane) {
        return lane(lane).error;
    }

    @Override
    public boolean recover(int lane) {
        ensureOpen();
        return lane(lane).recover();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (Lane l : lanes) {
            try {
                l.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        for (Registration r : registrations) {
            if (r != null) {
                r.close();
            }
        }
        for (Device d : devices) {
            try {
                d.ctx.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** One RC connection: its queue pair and the ring of contexts of requests posted and not yet reported. */
    private static final class Conn {
        final int index;
        final QueuePair qp;
        final long[] ctx;
        final boolean[] internal;
        final int mask;
        long head;
        long reported;
        long doneUpTo;
        long lastSignaled = -1;
        long signaledPending;
        int lastOpcode = -1;
        long lastRemote;
        int lastRkey;
        boolean failed;
        /** Written by the control thread in connect, read by the progress thread. */
        volatile QpInfo remote;
        /** Requests with sequence numbers in [errorFrom, errorUntil) failed: they are reported with errorStatus. */
        long errorFrom;

        long errorUntil;
        int errorStatus;
        String errorText;

        Conn(int index, QueuePair qp, int sqDepth) {
            this.index = index;
            this.qp = qp;
            int cap = Integer.highestOneBit(Math.max(2, sqDepth) * 4 - 1); // at least twice the send queue
            this.ctx = new long[cap];
            this.internal = new boolean[cap];
            this.mask = cap - 1;
        }

        long inFlight() {
            return head - doneUpTo;
        }
    }

    private final class Lane {
        final int index;
        final Device device;
        final CompletionQueue cq;
        final int sqDepth;
        final int signalEvery;
        final int recvDepth;
        final long maxMessage;
        /**
         * Connection index -> connection, copy-on-write: {@link #prepare} and {@link #disconnect} replace the array
         * under the lane's lock; the progress thread reads it without one (null once disconnected).
         */
        volatile Conn[] conns = new Conn[0];

        final WorkCompletions wcs;
        final SendWr swr = new SendWr(1);
        final RecvWr rwr = new RecvWr(1);
        volatile String error;

        Lane(int index, Device device, int sqDepth, int queueDepth) {
            this.index = index;
            this.device = device;
            this.sqDepth = sqDepth;
            this.signalEvery = Math.max(1, sqDepth / 4);
            this.recvDepth =
                    Math.max(4, Math.min(queueDepth, device.ctx.deviceAttr().maxQpWr()));
            this.cq = device.ctx.createCq(Math.min(device.ctx.deviceAttr().maxCqe(), 4 * (sqDepth + recvDepth) * 8));
            this.wcs = new WorkCompletions(64);
            this.maxMessage = Math.min(0xFFFF_FFFFL, Math.max(1, device.port.maxMsgSz()));
        }

        synchronized int prepare() {
            QueuePair qp = device.pd.createQp(QpInitAttr.rc(cq)
                    .maxSendWr(sqDepth)
                    .maxRecvWr(recvDepth)
                    .maxSendSge(1)
                    .maxRecvSge(1));
            Conn[] table = conns;
            int idx = table.length;
            Conn c = new Conn(idx, qp, qp.maxSendWr());
            try {
                qp.modify(
                        new QpAttr().state(IBV_QPS_INIT).pkeyIndex(0).port(PORT).accessFlags(ACCESS));
                postRecvs(c, recvDepth);
            } catch (RuntimeException e) {
                qp.close();
                throw e;
            }
            Conn[] next = Arrays.copyOf(table, idx + 1);
            next[idx] = c;
            conns = next; // published ready: the progress thread never sees a half-made connection
            return idx;
        }

        /** @return connection {@code connection}, or null when there is none (never made, or disconnected) */
        Conn find(int connection) {
            Conn[] table = conns;
            return connection >= 0 && connection < table.length ? table[connection] : null;
        }

        Conn conn(int connection) {
            Conn c = find(connection);
            if (c == null) {
                throw new IllegalArgumentException("lane " + index + " has no connection " + connection);
            }
            return c;
        }

        private void postRecvs(Conn c, int n) {
            rwr.wrId(RECV_TAG | c.index).numSge(0);
            for (int i = 0; i < n; i++) {
                int rc = c.qp.postRecv(rwr);
                if (rc != 0) {
                    throw new VerbsException("ibv_post_recv", "lane " + index, rc);
                }
            }
        }

        int post(
                int connection,
                int opcode,
                MemoryRegion mr,
                long localAddress,
                long length,
                long remoteAddress,
                long remoteKey,
                int imm,
                long context) {
            if (error != null) {
                return FAILED;
            }
            Conn c = find(connection);
            if (c == null) {
                error = "lane " + index + " has no connection " + connection + " (never prepared, or disconnected)";
                return FAILED;
            }
            if (length < 0 || length > maxMessage) {
                error = "length " + length + " is outside [0, " + maxMessage + "] for lane " + index;
                return FAILED;
            }
            if (c.remote == null) {
                error = "connection " + connection + " on lane " + index
                        + " was never connected: call connect with the peer's endpoint bytes first";
                return FAILED;
            }
            if (c.failed) {
                return FAILED;
            }
            // one send queue slot stays free for the fence; contexts not yet handed to the engine keep their ring slots
            if (c.inFlight() >= c.qp.maxSendWr() - 1 || c.head - c.reported >= c.ctx.length - 1) {
                return BACK_PRESSURED;
            }
            long seq = c.head;
            boolean signal = seq - c.lastSignaled >= signalEvery;
            swr.wrId(((long) connection << 32) | (seq & 0xFFFF_FFFFL))
                    .opcode(opcode)
                    .sge(mr, localAddress - mr.address(), (int) length)
                    .rdma(remoteAddress, (int) remoteKey)
                    .flags(signal ? IBV_SEND_SIGNALED : 0);
            if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
                swr.immData(imm);
            }
            int rc = c.qp.postSend(swr);
            if (rc == 12 /* ENOMEM: send queue full */) {
                return BACK_PRESSURED;
            }
            if (rc != 0) {
                error = "ibv_post_send failed on lane " + index + ": error " + rc;
                return FAILED;
            }
            int slot = (int) (seq & c.mask);
            c.ctx[slot] = context;
            c.internal[slot] = false;
            c.head = seq + 1;
            c.lastOpcode = opcode == IBV_WR_RDMA_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
            c.lastRemote = remoteAddress;
            c.lastRkey = (int) remoteKey;
            if (signal) {
                c.lastSignaled = seq;
                c.signaledPending++;
            }
            return OK;
        }

        /** Posts a signaled zero-length request behind trailing unsignaled ones, so they complete. */
        private void fence(Conn c) {
            if (c.head - c.reported >= c.ctx.length) {
                return; // the ring is full of unreported contexts; the engine's next poll drains them first
            }
            long seq = c.head;
            swr.wrId(((long) c.index << 32) | (seq & 0xFFFF_FFFFL))
                    .opcode(c.lastOpcode)
                    .numSge(0)
                    .rdma(c.lastRemote, c.lastRkey)
                    .flags(IBV_SEND_SIGNALED);
            int rc = c.qp.postSend(swr);
            if (rc != 0) {
                return; // queue full: a signaled request is already behind them
            }
            int slot = (int) (seq & c.mask);
            c.internal[slot] = true;
            c.head = seq + 1;
            c.lastSignaled = seq;
            c.signaledPending++;
        }

        int poll(Completions out) {
            out.clear();
            // contexts already known complete but not reported for lack of room last time
            Conn[] table = conns;
            for (Conn c : table) {
                if (c != null) {
                    drain(c, out);
                }
            }
            int room = out.capacity() - out.count;
            if (room <= 0) {
                return out.count;
            }
            int n = cq.poll(wcs, Math.min(room, wcs.capacity()));
            if (n < 0) {
                error = "ibv_poll_cq failed on lane " + index + ": " + n;
                return out.count;
            }
            for (int i = 0; i < n; i++) {
                long wrId = wcs.wrId(i);
                int status = wcs.status(i);
                if ((wrId & RECV_TAG) != 0) {
                    Conn c = at(table, (int) (wrId & 0xFFFF_FFFFL));
                    if (status == IBV_WC_SUCCESS) {
                        out.add(Completions.REMOTE_IMMEDIATE, 0, wcs.immData(i));
                        if (c != null && !c.failed) {
                            postRecvs(c, 1);
                        }
                    } else if (c != null && !c.failed) {
                        // a flushed receive means the queue pair went to the error state (the peer's request failed)
                        fail(c, c.doneUpTo, status, wcs.vendorErr(i));
                        drain(c, out);
                    }
                    continue;
                }
                Conn c = at(table, (int) (wrId >>> 32));
                if (c == null) {
                    continue;
                }
                long seq = fullSeq(c, wrId & 0xFFFF_FFFFL);
                if (c.signaledPending > 0) {
                    c.signaledPending--;
                }
                if (status == IBV_WC_SUCCESS) {
                    c.doneUpTo = Math.max(c.doneUpTo, seq + 1);
                    drain(c, out);
                } else if (!c.failed) {
                    // in order: everything before seq succeeded, seq and everything after it failed
                    c.doneUpTo = Math.max(c.doneUpTo, seq);
                    fail(c, seq, status, wcs.vendorErr(i));
                    drain(c, out);
                }
            }
            if (n == 0) {
                for (Conn c : table) {
                    if (c != null && !c.failed && c.signaledPending == 0 && c.head > c.doneUpTo) {
                        fence(c);
                    }
                }
            }
            return out.count;
        }

        /** @return connection {@code i} of a snapshot of {@link #conns}, null when gone or newer than the snapshot */
        private Conn at(Conn[] table, int i) {
            if (i < table.length) {
                return table[i];
            }
            return find(i); // made after the snapshot: its completions can only arrive once it is published
        }

        private long fullSeq(Conn c, long low32) {
            long base = c.doneUpTo & ~0xFFFF_FFFFL;
            long s = base | low32;
            return s < c.doneUpTo ? s + (1L << 32) : s;
        }

        /**
         * Reports contexts of {@code c} from {@code reported} up to {@code doneUpTo}, as far as {@code out} has room.
         */
        private void drain(Conn c, Completions out) {
            while (c.reported < c.doneUpTo && out.count < out.capacity()) {
                int slot = (int) (c.reported & c.mask);
                if (!c.internal[slot]) {
                    int status = c.reported >= c.errorFrom && c.reported < c.errorUntil ? c.errorStatus : 0;
                    String text = c.errorText;
                    if (status == 0) {
                        out.add(Completions.LOCAL, c.ctx[slot], 0);
                    } else {
                        out.addError(Completions.LOCAL, c.ctx[slot], status, text);
                    }
                }
                c.reported++;
            }
        }

        /**
         * Marks {@code c} failed from request {@code fromSeq} on: it and every later outstanding request are reported
         * as failed.
         */
        private void fail(Conn c, long fromSeq, int status, int vendorErr) {
            c.failed = true;
            if (c.errorUntil <= c.reported) {
                c.errorFrom = fromSeq;
            }
            c.errorUntil = c.head;
            c.errorStatus = status;
            c.errorText = VerbsException.wcStatusName(status) + " (" + VerbsException.wcStatusText(status) + ")";
            c.doneUpTo = c.head;
            if (error == null) {
                error = "lane " + index + " (" + device.ctx.deviceName() + ") connection " + c.index + ", qp "
                        + c.qp.qpNum() + ": "
                        + VerbsException.wcStatusName(status) + " (" + VerbsException.wcStatusText(status)
                        + ", vendor_err " + vendorErr
                        + "); the queue pair is in the error state";
            }
        }

        synchronized boolean recover() {
            // flushed completions of the failed queue pairs carry nothing new: their contexts were reported as failed
            while (cq.poll(wcs) > 0) {
                for (int i = 0; i < wcs.count(); i++) {
                    long wrId = wcs.wrId(i);
                    if ((wrId & RECV_TAG) == 0 && wcs.status(i) == IBV_WC_SUCCESS) {
                        Conn c = find((int) (wrId >>> 32));
                        if (c != null && !c.failed) {
                            c.doneUpTo = Math.max(c.doneUpTo, fullSeq(c, wrId & 0xFFFF_FFFFL) + 1);
                        }
                    }
                }
            }
            try {
                for (Conn c : conns) {
                    if (c == null) {
                        continue;
                    }
                    if (c.failed || c.qp.refreshState() == IBV_QPS_ERR) {
                        c.qp.modify(new QpAttr().state(IBV_QPS_RESET));
                        c.qp.modify(new QpAttr()
                                .state(IBV_QPS_INIT)
                                .pkeyIndex(0)
                                .port(PORT)
                                .accessFlags(ACCESS));
                        postRecvs(c, recvDepth);
                        if (c.remote != null) {
                            Verbs.connectRc(c.qp, c.remote, PORT, device.gidIndex, ACCESS);
                        }
                        c.doneUpTo = c.head; // what is not reported yet was failed by fail() and drains as errors
                        c.signaledPending = 0;
                        c.lastSignaled = c.head - 1;
                        c.failed = false;
                    }
                }
                error = null;
                return true;
            } catch (RuntimeException e) {
                error = "lane " + index + " could not be rebuilt: " + e.getMessage();
                return false;
            }
        }

        synchronized void disconnect(int connection) {
            Conn c = conn(connection);
            Conn[] next = conns.clone();
            next[connection] = null;
            conns = next;
            c.qp.close();
        }

        void close() {
            for (Conn c : conns) {
                if (c != null) {
                    c.qp.close();
                }
            }
            swr.close();
            rwr.close();
            wcs.close();
            cq.close();
        }
    }
}
