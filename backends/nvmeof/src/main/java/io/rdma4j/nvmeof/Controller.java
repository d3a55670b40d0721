package io.rdma4j.nvmeof;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.ffi.Segments;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.internal.PolledIo;
import io.rdma4j.nvmeof.internal.Sqe;
import io.rdma4j.nvmeof.rdma.RdmaResources;
import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A connected NVMe over Fabrics controller: an admin queue and I/O queues, each its own NVMe/TCP connection or
 * NVMe/RDMA (RDMA-CM) connection, as the {@link Target}'s transport says; everything above the queue is shared.
 * {@link #connect} brings the controller up as the NVMe over Fabrics specification lays out (Connect, CAP, CC.EN,
 * CSTS.RDY, Identify, Number of Queues, a Connect per I/O queue); {@link #close} shuts it down with CC.SHN.
 *
 * <p>I/O is asynchronous: {@link #read}, {@link #write}, {@link #flush} and {@link #writeZeroes} return futures that
 * complete exceptionally with an {@link NvmeStatusException} (the controller's status, named) or an
 * {@link NvmeConnectionException} / {@link NvmeProtocolException} (the connection failed; {@link #reconnect()}). Each
 * thread's commands go on one I/O queue, the threads dealt over the queues in the order they first submit, and a
 * command whose queue is full goes to the next with a free slot; transfers larger than the controller's MDTS are split
 * and the pieces issued at once, on the caller's queue as well. Futures complete on a queue's thread: do not block in
 * their callbacks; a command sent from one goes on that thread's queue.
 *
 * <p>Asynchronous events: after bring-up the controller keeps Asynchronous Event Requests outstanding on the admin
 * queue (as many as Identify Controller's AERL allows, at most {@value #MAX_ASYNC_EVENT_REQUESTS}); they are exempt
 * from the I/O timeout. Each event is cleared by reading the log page it names (Changed Namespace List for namespace
 * changes), handed to {@link #onAsyncEvent} listeners and {@link #pollAsyncEvent}, and the request is sent again.
 * {@link #reconnect()} arms new requests; {@link #close()} ends them with the connection.
 *
 * <p>This class holds the public API, the admin queries and the I/O commands; which queue a command goes on and its
 * future are {@code IoDispatch}'s, the bring-up and shutdown sequence {@code BringUp}'s, what one bring-up created a
 * {@code Session}, the events {@code AsyncEvents}', and the blocking control-path calls {@code Calls}'. Calls go from
 * here down into them.
 */
public final class Controller implements AutoCloseable {
    /** The well-known NQN of a discovery controller. */
    public static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    /** At most this many Asynchronous Event Requests outstanding, whatever AERL allows. */
    public static final int MAX_ASYNC_EVENT_REQUESTS = 4;

    private final Target target;
    private final String subsystemNqn;
    private final ConnectOptions options;
    private final HostIdentity identity;
    private final Map<Long, NamespaceInfo> namespaces = new ConcurrentHashMap<>();
    private final AsyncEvents events;
    private final BringUp bringUp;
    private final QueueMetrics metrics;
    private final IoDispatch dispatch;
    private volatile Session session;
    private boolean closed;

    private Controller(
            Target target,
            String subsystemNqn,
            ConnectOptions options,
            TcpQueue.Connector connector,
            MeterRegistry registry) {
        HostIdentity.validateNqn(subsystemNqn, "subsystem NQN");
        this.target = target;
        this.subsystemNqn = subsystemNqn;
        this.options = options;
        this.identity = options.resolvedIdentity();
        this.events = new AsyncEvents(target, options.connectTimeout(), namespaces);
        this.bringUp = new BringUp(target, subsystemNqn, options, identity, connector, events);
        this.metrics = QueueMetrics.create(registry, target, subsystemNqn, options.ioQueues());
        this.dispatch = new IoDispatch(metrics, options.ioQueues(), () -> session);
    }

    /**
     * Connects to subsystem {@code subsystemNqn} at {@code target} and brings up its controller and I/O queues.
     *
     * @throws NvmeStatusException when the controller refuses (e.g. Connect Invalid Parameters for an unknown NQN)
     * @throws NvmeConnectionException when the target cannot be reached
     */
    public static Controller connect(Target target, String subsystemNqn, ConnectOptions options) {
        return connect(target, subsystemNqn, options, TcpQueue.Connector.PLAIN, null);
    }

    /**
     * As {@link #connect(Target, String, ConnectOptions)}, publishing the I/O queues' meters in {@code registry}, each
     * tagged {@code target}, {@code subsystem} and {@code queue} (0 up to {@link ConnectOptions#ioQueues()}):
     * {@code rdma4j.nvme.commands} (a timer of each I/O command's latency; its rate is the queue's IOPS),
     * {@code rdma4j.nvme.bytes}, {@code rdma4j.nvme.errors} and the gauge {@code rdma4j.nvme.outstanding}. They leave
     * the registry when the controller closes.
     *
     * @param registry where the meters go; null for none
     * @throws NvmeStatusException when the controller refuses (e.g. Connect Invalid Parameters for an unknown NQN)
     * @throws NvmeConnectionException when the target cannot be reached
     */
    public static Controller connect(
            Target target, String subsystemNqn, ConnectOptions options, MeterRegistry registry) {
        return connect(target, subsystemNqn, options, TcpQueue.Connector.PLAIN, registry);
    }

    static Controller connect(
            Target target, String subsystemNqn, ConnectOptions options, TcpQueue.Connector connector) {
        return connect(target, subsystemNqn, options, connector, null);
    }

    static Controller connect(
            Target target,
            String subsystemNqn,
            ConnectOptions options,
            TcpQueue.Connector connector,
            MeterRegistry registry) {
        Controller c = new Controller(target, subsystemNqn, options, connector, registry);
        try {
            c.session = c.bringUp.open();
        } catch (RuntimeException e) {
            c.metrics.close();
            throw e;
        }
        return c;
    }

    /** Connects to the discovery controller at {@code target} and reads its whole discovery log. */
    public static DiscoveryLog discover(Target target, ConnectOptions options) {
        return discover(target, options, TcpQueue.Connector.PLAIN);
    }

    static DiscoveryLog discover(Target target, ConnectOptions options, TcpQueue.Connector connector) {
        try (Controller c = connect(target, DISCOVERY_NQN, options.withKeepAlive(Duration.ZERO), connector)) {
            return c.discoveryLog();
        }
    }

    /**
     * Calls {@code listener} with every asynchronous event from now on, on a dedicated thread (it may call this
     * controller). Events arrive until {@link #close()}, across {@link #reconnect()}.
     *
     * @return closing it removes the listener
     */
    public AutoCloseable onAsyncEvent(Consumer<AsyncEvent> listener) {
        return events.listen(listener);
    }

    /**
     * Takes the oldest asynchronous event not yet taken (the last 64 are kept), waiting up to {@code timeout} for one.
     *
     * @return the event, or null when none arrived in time
     */
    public AsyncEvent pollAsyncEvent(Duration timeout) throws InterruptedException {
        return events.poll(timeout);
    }

    /**
     * @return how many Asynchronous Event Requests bring-up sent (min(AERL + 1, {@value #MAX_ASYNC_EVENT_REQUESTS}); 0
     *     on discovery)
     */
    public int asyncEventRequests() {
        return live().asyncEventRequests();
    }

    private Session live() {
        Session s = session;
        if (s == null) {
            throw new IllegalStateException("controller " + target + " " + subsystemNqn + " is closed: connect again");
        }
        return s;
    }

    /** @return what Identify Controller reported */
    public ControllerInfo info() {
        return live().info();
    }

    /** @return the controller ID the admin Connect was given */
    public int controllerId() {
        return live().cntlid();
    }

    /** @return the CAP property */
    public long capabilities() {
        return live().cap();
    }

    /** @return the VS property */
    public int version() {
        return live().version();
    }

    /** @return how many I/O queues are connected */
    public int ioQueueCount() {
        return live().io().size();
    }

    /** @return entries per I/O queue, the most commands in flight on each */
    public int queueDepth() {
        return live().depth();
    }

    /** @return the largest transfer one command moves; larger I/O is split */
    public long maxTransferBytes() {
        return live().maxTransfer();
    }

    /** @return whether NVMe/TCP header and data digests are on (as negotiated); both false on NVMe/RDMA */
    public boolean[] digests() {
        return live().admin() instanceof TcpQueue a
                ? new boolean[] {a.headerDigest(), a.dataDigest()}
                : new boolean[] {false, false};
    }

    /** @return MAXH2CDATA the admin queue's ICResp announced (NVMe/TCP), 0 on NVMe/RDMA */
    public long maxH2CData() {
        return live().admin() instanceof TcpQueue a ? a.maxH2CData() : 0;
    }

    /** @return how many of the caller's buffers are registered with the RDMA device now (0 on NVMe/TCP) */
    public int rdmaRegistrations() {
        RdmaResources r = live().rdma();
        return r == null ? 0 : r.registrations();
    }

    /**
     * @return how many bounce buffers for heap memory were registered with the RDMA device so far (0 on NVMe/TCP); they
     *     are pooled, so commands on heap buffers of one size register one between them
     */
    public long rdmaBounceRegistrations() {
        RdmaResources r = live().rdma();
        return r == null ? 0 : r.bounceRegistrations();
    }

    /**
     * Registers GPU memory with this controller's RDMA device (as a dma-buf, else by its device address through a
     * peer-memory client such as nvidia_peermem), once, so that {@link #read}/{@link #write} on segments over its
     * device addresses ({@code MemorySegment.ofAddress(memory.address()).reinterpret(memory.length())}) point keyed
     * SGLs straight at it: the target moves the bytes by RDMA to and from the GPU and the CPU touches none of them (no
     * in-capsule copy). The registration lasts until the controller closes or reconnects (register again after
     * {@link #reconnect()}). The caller orders the device's work around the I/O ({@link DeviceMemory#beforeNicRead},
     * {@link DeviceMemory#afterNicWrite}).
     *
     * @throws io.rdma4j.DeviceRegistrationException over NVMe/TCP, whose data goes through the CPU's sockets, or when
     *     the RDMA device cannot register the memory (the message names both paths and the fix)
     */
    public void registerDevice(DeviceMemory memory) {
        RdmaResources r = live().rdma();
        if (r == null) {
            throw new io.rdma4j.DeviceRegistrationException(
                    target + " is NVMe/TCP, whose data goes through the CPU's"
                            + " sockets: device memory goes through host memory (NVMe/RDMA with GPUDirect reaches it directly)");
        }
        r.registerDevice(memory);
    }

    /**
     * Releases the NIC's registration of device memory made by {@link #registerDevice}: the NIC unpins it and commands
     * over its addresses no longer point at it. Call it once no I/O on that memory is in flight, and before the memory
     * is freed: a later allocation at the same device addresses would otherwise be reached through the old
     * registration. Nothing to do over NVMe/TCP, on a closed controller (its registrations went with it) or for memory
     * never registered.
     *
     * @return whether a registration was released
     */
    public boolean deregisterDevice(DeviceMemory memory) {
        Session s = session;
        RdmaResources r = s == null ? null : s.rdma();
        return r != null && r.deregisterDevice(memory);
    }

    /** @return how many device memories {@link #registerDevice} keeps registered now (0 over NVMe/TCP) */
    public int deviceRegistrations() {
        Session s = session;
        RdmaResources r = s == null ? null : s.rdma();
        return r == null ? 0 : r.deviceRegistrations();
    }

    /** @return the target this controller is connected to */
    public Target target() {
        return target;
    }

    /** @return the subsystem NQN */
    public String subsystemNqn() {
        return subsystemNqn;
    }

    /** @return the host identity presented in Connect */
    public HostIdentity hostIdentity() {
        return identity;
    }

    private Cqe admin(byte[] sqe, FabricQueue.Data data, String what) {
        return Calls.call(live().admin(), sqe, data, what, false, options.connectTimeout(), target);
    }

    /** @return every active namespace ID, ascending (Identify CNS 02h) */
    public List<Long> activeNamespaces() {
        List<Long> out = new ArrayList<>();
        long start = 0;
        while (true) {
            byte[] d = new byte[4096];
            admin(
                    Sqe.identify(Sqe.CNS_ACTIVE_NS_LIST, start, d.length),
                    Calls.heap(d, false),
                    "Identify Active Namespace List(from " + start + ")");
            int n = 0;
            for (int i = 0; i < 1024; i++) {
                long nsid = Le.u32(d, i * 4);
                if (nsid == 0) {
                    break;
                }
                if (nsid <= start) {
                    throw new NvmeProtocolException("active namespace list is not ascending at NSID " + nsid);
                }
                out.add(nsid);
                start = nsid;
                n++;
            }
            if (n < 1024) {
                return out;
            }
        }
    }

    /** @return Identify Namespace for {@code nsid}, cached until {@link #reconnect()} */
    public NamespaceInfo namespace(long nsid) {
        NamespaceInfo ns = namespaces.get(nsid);
        if (ns != null) {
            return ns;
        }
        checkNsid(nsid);
        byte[] d = new byte[4096];
        admin(
                Sqe.identify(Sqe.CNS_NAMESPACE, nsid, d.length),
                Calls.heap(d, false),
                "Identify Namespace(nsid=" + nsid + ")");
        ns = NamespaceInfo.parse(nsid, d);
        namespaces.put(nsid, ns);
        return ns;
    }

    private static void checkNsid(long nsid) {
        if (nsid < 1 || nsid > 0xfffffffeL) {
            throw new IllegalArgumentException("namespace ID " + nsid + " is outside 1..0xFFFFFFFE");
        }
    }

    /** Reads the whole discovery log (only on a discovery controller), re-reading if it changed meanwhile. */
    public DiscoveryLog discoveryLog() {
        Session s = live();
        int chunk = (int) Math.max(4096, Math.min(s.maxTransfer(), 64 * 1024));
        for (int attempt = 0; attempt < 5; attempt++) {
            byte[] header = readLog(DiscoveryLog.HEADER, 0, chunk);
            long numrec = DiscoveryLog.recordCount(header);
            if (numrec < 0 || numrec > 65536) {
                throw new NvmeProtocolException("discovery log claims " + numrec + " records");
            }
            int total = (int) (DiscoveryLog.HEADER + numrec * DiscoveryLog.ENTRY);
            byte[] all = readLog(total, 0, chunk);
            byte[] again = readLog(DiscoveryLog.HEADER, 0, chunk);
            if (Le.i64(again, 0) == Le.i64(all, 0) && Le.i64(all, 0) == Le.i64(header, 0)) {
                return DiscoveryLog.parse(all);
            }
        }
        throw new NvmeException(target + ": the discovery log kept changing while it was read (GENCTR moved 5 times)");
    }

    private byte[] readLog(int length, long offset, int chunk) {
        byte[] out = new byte[length];
        for (int off = 0; off < length; off += chunk) {
            int n = Math.min(chunk, length - off);
            byte[] d = new byte[n];
            admin(
                    Sqe.getLogPage(Sqe.LID_DISCOVERY, 0, offset + off, n),
                    Calls.heap(d, false),
                    "Get Log Page(discovery, offset=" + (offset + off) + ", length=" + n + ")");
            System.arraycopy(d, 0, out, off, n);
        }
        return out;
    }

    /**
     * Reads {@code buffer.byteSize()} bytes (a multiple of the block size) from {@code lba} into {@code buffer}.
     *
     * <p>Keep the buffer's memory alive until the future completes. If its arena closes while the read is in flight,
     * the read fails ("lost its data") and the connection carries on; a shared arena's {@code close()} that comes while
     * the data is being received into it fails instead, with the JDK's {@code IllegalStateException} (the receive holds
     * the memory open), and may be tried again.
     *
     * @param buffer any writable segment: native (registered or not) or heap
     */
    public CompletableFuture<Void> read(long nsid, long lba, MemorySegment buffer) {
        Segments.requireAlive(buffer, "read buffer");
        if (buffer.isReadOnly()) {
            throw new IllegalArgumentException("read buffer is read-only: pass a writable segment");
        }
        return transfer(false, nsid, lba, buffer);
    }

    /** Writes {@code buffer} (a multiple of the block size) to {@code lba}. */
    public CompletableFuture<Void> write(long nsid, long lba, MemorySegment buffer) {
        Segments.requireAlive(buffer, "write buffer");
        return transfer(true, nsid, lba, buffer);
    }

    private CompletableFuture<Void> transfer(boolean write, long nsid, long lba, MemorySegment buffer) {
        if (!live().admin().accessible(buffer)) {
            throw new IllegalArgumentException(
                    (write ? "write" : "read") + " buffer belongs to a confined arena, so the queue threads cannot"
                            + " move its data: allocate it from Arena.ofShared() (or Arena.global(), or use a heap segment)");
        }
        NamespaceInfo ns = namespace(nsid);
        long len = buffer.byteSize();
        int bs = ns.blockSize();
        if (len == 0 || len % bs != 0) {
            throw new IllegalArgumentException((write ? "write" : "read") + " of " + len + " bytes: namespace " + nsid
                    + " moves whole " + bs + "-byte blocks; size the buffer to a positive multiple of " + bs);
        }
        if (lba < 0) {
            throw new IllegalArgumentException("LBA " + lba + " is negative");
        }
        Session s = live(); // one session for the size of the pieces and all of them
        long chunk = Math.min(s.maxTransfer(), 65536L * bs) / bs * bs;
        int queue = dispatch.callersQueue();
        if (len <= chunk) { // one command: no list, no combined future
            return dispatch.send(
                    s,
                    Sqe.readWrite(write, nsid, lba, (int) (len / bs)),
                    new FabricQueue.Data(buffer, 0, (int) len, write),
                    null,
                    queue);
        }
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (long off = 0; off < len; off += chunk) {
            int n = (int) Math.min(chunk, len - off);
            long slba = lba + off / bs;
            int blocks = n / bs;
            // no description: the queue and io() name the command from its bytes only when it fails; the parts go on
            // the caller's queue, as one thread's commands do (spreading them over every queue measured 2-15% slower
            // on one initiator core: perf/README.md), and spill to the next when it is full
            parts.add(dispatch.send(
                    s,
                    Sqe.readWrite(write, nsid, slba, blocks),
                    new FabricQueue.Data(buffer, off, n, write),
                    null,
                    queue));
        }
        return IoDispatch.all(parts);
    }

    /**
     * Opens a queue of its own for namespace {@code nsid}, driven from the caller's thread: see {@link PolledQueue}. It
     * takes one of the queue IDs reserved at connect ({@link ConnectOptions#polledQueues()}) until it closes.
     *
     * @param depth commands in flight at most (fewer if the controller allows fewer; an NVMe/RDMA queue holds at least
     *     two)
     */
    public PolledQueue openPolledQueue(long nsid, int depth) {
        if (depth < 1) {
            throw new IllegalArgumentException("depth " + depth + " is below 1");
        }
        Session s = live();
        NamespaceInfo ns = namespace(nsid);
        int qid = s.polled().take();
        try {
            int d = Math.min(depth, s.depthLimit());
            PolledIo q = bringUp.openPolled(s, qid, d);
            return new PolledQueue(q, nsid, ns, () -> s.polled().give(qid));
        } catch (RuntimeException e) {
            s.polled().give(qid);
            throw e;
        }
    }

    /** Flushes the volatile write cache of namespace {@code nsid}. */
    public CompletableFuture<Void> flush(long nsid) {
        checkNsid(nsid);
        return io(Sqe.flush(nsid), FabricQueue.Data.NONE, "Flush(nsid=" + nsid + ")");
    }

    /** Zeroes {@code blocks} logical blocks from {@code lba} without sending data (Write Zeroes). */
    public CompletableFuture<Void> writeZeroes(long nsid, long lba, long blocks) {
        checkNsid(nsid);
        if (!live().info().supportsWriteZeroes()) {
            throw new UnsupportedOperationException(
                    "controller " + live().info().model() + " does not support Write Zeroes (ONCS bit 3 clear):"
                            + " write a zero-filled buffer instead");
        }
        if (blocks < 1 || lba < 0) {
            throw new IllegalArgumentException(
                    "writeZeroes(lba=" + lba + ", blocks=" + blocks + "): need lba >= 0 and blocks >= 1");
        }
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (long b = 0; b < blocks; b += 65536) {
            int n = (int) Math.min(65536, blocks - b);
            parts.add(io(
                    Sqe.writeZeroes(nsid, lba + b, n),
                    FabricQueue.Data.NONE,
                    "Write Zeroes(nsid=" + nsid + ", slba=" + (lba + b) + ", blocks=" + n + ")"));
        }
        return IoDispatch.all(parts);
    }

    /** Sends a command on the calling thread's queue. */
    private CompletableFuture<Void> io(byte[] sqe, FabricQueue.Data data, String what) {
        return dispatch.send(live(), sqe, data, what, dispatch.callersQueue());
    }

    /**
     * Tears the queues down and brings the controller up again (a new admin Connect, new I/O queues). Commands still
     * outstanding on the old queues fail with {@link NvmeConnectionException}.
     */
    public synchronized void reconnect() {
        if (closed) {
            throw new IllegalStateException("controller " + target + " " + subsystemNqn + " is closed: connect again");
        }
        Session old = session;
        session = null;
        if (old != null) {
            BringUp.drop(old);
        }
        namespaces.clear();
        session = bringUp.open();
    }

    /** Shuts the controller down (CC.SHN, wait for CSTS.SHST) and closes every connection. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        metrics.close();
        Session s = session;
        session = null;
        if (s == null) {
            return;
        }
        if (s.keepAlive() != null) {
            s.keepAlive().cancel(false);
        }
        // the I/O queues first, then the shutdown on the admin queue; every connection closes whatever fails
        List<AutoCloseable> steps = new ArrayList<>(s.io());
        steps.add(() -> bringUp.shutDown(s));
        steps.add(s.admin());
        steps.add(s.rdma());
        Closeables.closeAll(steps);
    }

    @Override
    public String toString() {
        Session s = session;
        return "Controller[" + target + " " + subsystemNqn
                + (s == null ? ", closed" : ", cntlid=" + s.cntlid() + ", " + s.io().size() + " I/O queues") + "]";
    }
}
