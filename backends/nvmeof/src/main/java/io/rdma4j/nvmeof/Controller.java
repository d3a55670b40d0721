package io.rdma4j.nvmeof;

import io.rdma4j.Closeables;
import io.rdma4j.ffi.Segments;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.internal.Sqe;
import io.rdma4j.nvmeof.rdma.RdmaQueue;
import io.rdma4j.nvmeof.rdma.RdmaResources;
import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A connected NVMe over Fabrics controller: an admin queue and I/O queues, each its own NVMe/TCP connection or
 * NVMe/RDMA (RDMA-CM) connection, as the {@link Target}'s transport says; everything above the queue is shared.
 * {@link #connect} brings the controller up as the NVMe over Fabrics specification lays out (Connect, CAP, CC.EN,
 * CSTS.RDY, Identify, Number of Queues, a Connect per I/O queue); {@link #close} shuts it down with CC.SHN.
 *
 * <p>I/O is asynchronous: {@link #read}, {@link #write}, {@link #flush} and {@link #writeZeroes} return futures that
 * complete exceptionally with an {@link NvmeStatusException} (the controller's status, named) or an
 * {@link NvmeConnectionException} / {@link NvmeProtocolException} (the connection failed; {@link #reconnect()}).
 * Transfers larger than the controller's MDTS are split and the pieces issued at once, spread over all I/O queues.
 * Futures complete on a queue's reader thread: do not block in their callbacks.
 *
 * <p>Asynchronous events: after bring-up the controller keeps Asynchronous Event Requests outstanding on the admin
 * queue (as many as Identify Controller's AERL allows, at most {@value #MAX_ASYNC_EVENT_REQUESTS}); they are exempt
 * from the I/O timeout. Each event is cleared by reading the log page it names (Changed Namespace List for namespace
 * changes), handed to {@link #onAsyncEvent} listeners and {@link #pollAsyncEvent}, and the request is sent again.
 * {@link #reconnect()} arms new requests; {@link #close()} ends them with the connection.
 */
public final class Controller implements AutoCloseable {
    /** The well-known NQN of a discovery controller. */
    public static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    private static final int ADMIN_DEPTH = 32;
    private static final int ADMIN_MAX_DATA = 1 << 20;
    /** Admin and Fabrics commands may carry 8 KiB in-capsule (NVMe/TCP); Connect needs 1 KiB. */
    private static final int ADMIN_IN_CAPSULE = 8192;
    /** Upper bound on one command's transfer even where MDTS allows more: bounds per-PDU buffers. */
    private static final long MAX_COMMAND_BYTES = 4L << 20;
    /** At most this many Asynchronous Event Requests outstanding, whatever AERL allows. */
    public static final int MAX_ASYNC_EVENT_REQUESTS = 4;
    /** Events kept for {@link #pollAsyncEvent} before the oldest is dropped. */
    private static final int EVENT_BACKLOG = 64;
    /** OAES notices this host asks for: Namespace Attribute (8), Firmware Activation (9), ANA Change (11). */
    private static final int AEN_NOTICES = 1 << 8 | 1 << 9 | 1 << 11;
    /** Listeners run here, never on a queue's reader thread, so they may call the controller (which waits on it). */
    private static final ExecutorService EVENTS = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nvmeof-async-events");
        t.setDaemon(true);
        return t;
    });

    private static final ScheduledExecutorService KEEP_ALIVE = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nvmeof-keep-alive");
        t.setDaemon(true);
        return t;
    });

    private final Target target;
    private final String subsystemNqn;
    private final ConnectOptions options;
    private final HostIdentity identity;
    private final TcpQueue.Connector connector;
    private final boolean discovery;
    private final Map<Long, NamespaceInfo> namespaces = new ConcurrentHashMap<>();
    private final AtomicInteger nextQueue = new AtomicInteger();
    private final List<Consumer<AsyncEvent>> eventListeners = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<AsyncEvent> events = new LinkedBlockingQueue<>(EVENT_BACKLOG);
    private volatile Session session;
    private boolean closed;

    /** Everything one bring-up created; {@link #reconnect()} replaces it whole. */
    private record Session(
            FabricQueue admin,
            List<FabricQueue> io,
            RdmaResources rdma,
            int cntlid,
            long cap,
            int version,
            ControllerInfo info,
            long maxTransfer,
            int depth,
            ScheduledFuture<?> keepAlive,
            int asyncEventRequests) {}

    private Controller(
            Target target,
            String subsystemNqn,
            ConnectOptions options,
            TcpQueue.Connector connector,
            boolean discovery) {
        HostIdentity.validateNqn(subsystemNqn, "subsystem NQN");
        this.target = target;
        this.subsystemNqn = subsystemNqn;
        this.options = options;
        this.identity = options.resolvedIdentity();
        this.connector = connector;
        this.discovery = discovery;
    }

    /**
     * Connects to subsystem {@code subsystemNqn} at {@code target} and brings up its controller and I/O queues.
     *
     * @throws NvmeStatusException when the controller refuses (e.g. Connect Invalid Parameters for an unknown NQN)
     * @throws NvmeConnectionException when the target cannot be reached
     */
    public static Controller connect(Target target, String subsystemNqn, ConnectOptions options) {
        return connect(target, subsystemNqn, options, TcpQueue.Connector.PLAIN);
    }

    static Controller connect(
            Target target, String subsystemNqn, ConnectOptions options, TcpQueue.Connector connector) {
        Controller c = new Controller(target, subsystemNqn, options, connector, subsystemNqn.equals(DISCOVERY_NQN));
        c.session = c.bringUp();
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

    private InetSocketAddress address() {
        return new InetSocketAddress(target.host(), target.port());
    }

    private Session bringUp() {
        Duration step = options.connectTimeout();
        RdmaResources rdma = target.transport() == Target.Transport.RDMA ? new RdmaResources() : null;
        FabricQueue admin;
        try {
            admin = openQueue(rdma, 0, ADMIN_DEPTH, 0, step, ADMIN_MAX_DATA, ADMIN_IN_CAPSULE);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, rdma);
        }
        List<FabricQueue> io = new ArrayList<>();
        try {
            int kato = (int) options.keepAlive().toMillis();
            byte[] connectData = Sqe.connectData(identity.idBytes(), 0xffff, subsystemNqn, identity.nqn());
            Cqe c = call(
                    admin,
                    Sqe.connect(0, ADMIN_DEPTH - 1, kato, false),
                    heap(connectData, true),
                    "Connect(qid=0, subnqn=" + subsystemNqn + ", hostnqn=" + identity.nqn() + ")",
                    true);
            int cntlid = c.dw0() & 0xffff;
            long cap = call(admin, Sqe.propertyGet(Sqe.PROP_CAP, true), FabricQueue.Data.NONE, "Property Get CAP", true)
                    .value64();
            int version = call(
                            admin, Sqe.propertyGet(Sqe.PROP_VS, false), FabricQueue.Data.NONE, "Property Get VS", true)
                    .dw0();
            int mpsMin = (int) (cap >>> 48 & 0xf);
            long pageSize = 4096L << mpsMin;
            if (!discovery && (cap >>> 37 & 1) == 0) {
                throw new NvmeException(target + " " + subsystemNqn + ": CAP.CSS (0x" + Long.toHexString(cap)
                        + ") lacks the NVM command set, the only one this host speaks");
            }
            int cc = 1 | mpsMin << 7 | 6 << 16 | 4 << 20; // EN, MPS, CSS NVM, IOSQES 64 B, IOCQES 16 B
            call(
                    admin,
                    Sqe.propertySet(Sqe.PROP_CC, false, cc & 0xffffffffL),
                    FabricQueue.Data.NONE,
                    "Property Set CC.EN",
                    true);
            long readyMs = Math.max(1000, (cap >>> 24 & 0xff) * 500);
            waitStatus(admin, readyMs, true);
            byte[] id = new byte[ControllerInfo.SIZE];
            call(admin, Sqe.identify(Sqe.CNS_CONTROLLER, 0, id.length), heap(id, false), "Identify Controller", false);
            ControllerInfo info = ControllerInfo.parse(id);
            long maxTransfer = Math.min(info.maxTransferBytes(pageSize), MAX_COMMAND_BYTES);
            if (discovery) {
                return new Session(
                        admin,
                        List.of(),
                        rdma,
                        cntlid,
                        cap,
                        version,
                        info,
                        Math.min(maxTransfer, ADMIN_MAX_DATA),
                        0,
                        null,
                        0);
            }
            int want = options.ioQueues();
            int granted = call(
                            admin,
                            Sqe.setFeatures(Sqe.FID_NUMBER_OF_QUEUES, (want - 1) | (want - 1) << 16),
                            FabricQueue.Data.NONE,
                            "Set Features Number of Queues(" + want + ")",
                            false)
                    .dw0();
            int queues = Math.min(want, Math.min((granted & 0xffff) + 1, (granted >>> 16) + 1));
            int depth = (int) Math.min(options.queueDepth(), (cap & 0xffff) + 1);
            if (info.maxcmd() > 0) {
                depth = Math.min(depth, info.maxcmd());
            }
            int inCapsule = (int) Math.min(info.inCapsuleDataBytes(), maxTransfer);
            for (int q = 1; q <= queues; q++) {
                FabricQueue queue =
                        openQueue(rdma, q, depth, cntlid, options.ioTimeout(), (int) maxTransfer, inCapsule);
                io.add(queue);
                byte[] d = Sqe.connectData(identity.idBytes(), cntlid, subsystemNqn, identity.nqn());
                call(
                        queue,
                        Sqe.connect(q, depth - 1, 0, false),
                        heap(d, true),
                        "Connect(qid=" + q + ", cntlid=" + cntlid + ")",
                        true);
            }
            ScheduledFuture<?> ka = null;
            if (kato > 0 && info.kas() != 0) {
                long period = Math.max(100, kato / 2);
                ka = KEEP_ALIVE.scheduleAtFixedRate(() -> keepAlive(admin, io), period, period, TimeUnit.MILLISECONDS);
            }
            int aers = armAsyncEvents(admin, List.copyOf(io), info);
            return new Session(admin, List.copyOf(io), rdma, cntlid, cap, version, info, maxTransfer, depth, ka, aers);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, connections(io, admin, rdma));
        }
    }

    /** @return what a session holds, in the order it closes: I/O queues, the admin queue, the RDMA registrations */
    private static List<AutoCloseable> connections(List<FabricQueue> io, FabricQueue admin, RdmaResources rdma) {
        List<AutoCloseable> all = new ArrayList<>(io);
        all.add(admin);
        all.add(rdma);
        return all;
    }

    /**
     * Opens one queue of this controller's transport. On NVMe/RDMA the admin queue carries no in-capsule data (the
     * kernel target gives its admin queue no in-capsule buffers) and every queue shares {@code rdma}'s registrations.
     */
    private FabricQueue openQueue(
            RdmaResources rdma, int qid, int depth, int cntlid, Duration ioTimeout, int maxData, int inCapsule) {
        Duration step = options.connectTimeout();
        String name = target + (qid == 0 ? " admin" : " qid " + qid);
        return switch (target.transport()) {
            case TCP ->
                TcpQueue.open(
                        address(),
                        name,
                        new TcpQueue.Config(
                                qid,
                                depth,
                                options.headerDigest(),
                                options.dataDigest(),
                                step,
                                ioTimeout,
                                maxData,
                                inCapsule),
                        connector == TcpQueue.Connector.PLAIN
                                ? TcpQueue.Connector.leavingFrom(options.sourceAddress())
                                : connector);
            case RDMA ->
                RdmaQueue.open(
                        target.host(),
                        target.port(),
                        options.sourceAddress(),
                        name,
                        new RdmaQueue.Config(qid, depth, cntlid, step, ioTimeout, maxData, qid == 0 ? 0 : inCapsule),
                        rdma);
        };
    }

    /**
     * Enables the notices the controller offers (OAES) and sends min(AERL + 1, {@value #MAX_ASYNC_EVENT_REQUESTS})
     * Asynchronous Event Requests.
     *
     * @return how many were sent
     */
    private int armAsyncEvents(FabricQueue admin, List<FabricQueue> io, ControllerInfo info) {
        int notices = info.oaes() & AEN_NOTICES;
        if (notices != 0) {
            // A controller that refuses the configuration keeps its default one, whose events still arrive: not fatal.
            await(
                    admin.submit(
                            Sqe.setFeatures(Sqe.FID_ASYNC_EVENT_CONFIG, notices),
                            FabricQueue.Data.NONE,
                            "Set Features Asynchronous Event Configuration"),
                    options.connectTimeout(),
                    target + ": Set Features Asynchronous Event Configuration");
        }
        int n = Math.min(info.aerl() + 1, MAX_ASYNC_EVENT_REQUESTS);
        for (int i = 0; i < n; i++) {
            asyncEventRequest(admin, io);
        }
        return n;
    }

    /** Sends one Asynchronous Event Request; its completion reads the named log page, reports the event and re-arms. */
    private void asyncEventRequest(FabricQueue admin, List<FabricQueue> io) {
        admin.submitUntimed(Sqe.asyncEventRequest(), "Asynchronous Event Request")
                .whenComplete((cqe, ex) -> {
                    if (ex != null || admin.failure() != null || !cqe.ok()) {
                        // The connection closed or failed (a reconnect arms new requests), or the controller ended this
                        // request
                        // with an error status (Asynchronous Event Request Limit Exceeded, aborted at shutdown): not
                        // re-armed.
                        return;
                    }
                    int dw0 = cqe.dw0();
                    int type = dw0 & 0x7;
                    int info = dw0 >>> 8 & 0xff;
                    int logPage = dw0 >>> 16 & 0xff;
                    if (!AsyncEvent.definedType(type) || logPage == 0) {
                        NvmeProtocolException why = new NvmeProtocolException(target
                                + ": the controller completed an Asynchronous Event Request with "
                                + (AsyncEvent.definedType(type)
                                        ? "log page identifier 0 (reserved)"
                                        : "reserved event type " + type)
                                + String.format(" (DW0 0x%08x); the connection was closed: call reconnect()", dw0));
                        io.forEach(q -> q.fail(why));
                        admin.fail(why);
                        return;
                    }
                    readEventLog(admin, io, type, info, logPage);
                });
    }

    /** Reads (and so clears) the log page an event names, then reports the event and sends a new request. */
    private void readEventLog(FabricQueue admin, List<FabricQueue> io, int type, int info, int logPage) {
        byte[] log = new byte[logPage == Sqe.LID_CHANGED_NAMESPACES ? 4096 : logPage == Sqe.LID_ERROR ? 64 : 512];
        String what = String.format("Get Log Page(0x%02x, clearing an asynchronous event)", logPage);
        admin.submit(Sqe.getLogPage(logPage, Sqe.NSID_ALL, 0, log.length), heap(log, false), what)
                .whenComplete((cqe, ex) -> {
                    if (ex != null || admin.failure() != null) {
                        return;
                    }
                    List<Long> changed = new ArrayList<>();
                    boolean more = false;
                    if (cqe.ok() && logPage == Sqe.LID_CHANGED_NAMESPACES) {
                        more = Le.u32(log, 0) == Sqe.NSID_ALL;
                        for (int i = 0; i < 1024 && !more; i++) {
                            long nsid = Le.u32(log, i * 4);
                            if (nsid == 0) {
                                break;
                            }
                            changed.add(nsid);
                        }
                    }
                    AsyncEvent e = new AsyncEvent(type, info, logPage, changed, more);
                    if (e.namespaceAttributeChanged()) {
                        if (more) {
                            namespaces.clear();
                        } else {
                            changed.forEach(namespaces::remove);
                        }
                    }
                    deliver(e);
                    asyncEventRequest(admin, io);
                });
    }

    private void deliver(AsyncEvent e) {
        while (!events.offer(e)) {
            events.poll(); // the backlog is full: the oldest event goes
        }
        EVENTS.execute(() -> {
            for (Consumer<AsyncEvent> l : eventListeners) {
                try {
                    l.accept(e);
                } catch (RuntimeException x) {
                    Thread t = Thread.currentThread();
                    t.getUncaughtExceptionHandler()
                            .uncaughtException(t, x); // one failing listener does not silence the others
                }
            }
        });
    }

    /**
     * Calls {@code listener} with every asynchronous event from now on, on a dedicated thread (it may call this
     * controller). Events arrive until {@link #close()}, across {@link #reconnect()}.
     *
     * @return closing it removes the listener
     */
    public AutoCloseable onAsyncEvent(Consumer<AsyncEvent> listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        eventListeners.add(listener);
        return () -> eventListeners.remove(listener);
    }

    /**
     * Takes the oldest asynchronous event not yet taken (the last {@value #EVENT_BACKLOG} are kept), waiting up to
     * {@code timeout} for one.
     *
     * @return the event, or null when none arrived in time
     */
    public AsyncEvent pollAsyncEvent(Duration timeout) throws InterruptedException {
        return events.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * @return how many Asynchronous Event Requests bring-up sent (min(AERL + 1, {@value #MAX_ASYNC_EVENT_REQUESTS}); 0
     *     on discovery)
     */
    public int asyncEventRequests() {
        return live().asyncEventRequests();
    }

    private void keepAlive(FabricQueue admin, List<FabricQueue> io) {
        if (admin.failure() != null) {
            return;
        }
        admin.submit(Sqe.keepAlive(), FabricQueue.Data.NONE, "Keep Alive").whenComplete((cqe, ex) -> {
            NvmeException why = ex != null
                    ? new NvmeConnectionException(
                            target + ": keep-alive failed: " + unwrap(ex).getMessage(), unwrap(ex))
                    : cqe.ok()
                            ? null
                            : new NvmeConnectionException(target + ": keep-alive failed: "
                                    + NvmeStatusException.name(false, cqe.sct(), cqe.sc()) + "; call reconnect()");
            if (why != null) {
                io.forEach(q -> q.fail(why));
                admin.fail(why);
            }
        });
    }

    private void waitStatus(FabricQueue admin, long timeoutMs, boolean ready) {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (true) {
            int csts = call(
                            admin,
                            Sqe.propertyGet(Sqe.PROP_CSTS, false),
                            FabricQueue.Data.NONE,
                            "Property Get CSTS",
                            true)
                    .dw0();
            if ((csts & 2) != 0) {
                throw new NvmeException(
                        target + " " + subsystemNqn + ": the controller reports a fatal status (CSTS.CFS, CSTS=0x"
                                + Integer.toHexString(csts) + ") " + (ready ? "while enabling" : "while shutting down")
                                + "; the target needs attention (its log says why)");
            }
            if (ready ? (csts & 1) != 0 : (csts >>> 2 & 3) == 2) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new NvmeException(target + " " + subsystemNqn + ": " + (ready ? "CSTS.RDY" : "CSTS.SHST complete")
                        + " not set within " + timeoutMs + " ms (CSTS=0x" + Integer.toHexString(csts) + ")");
            }
            try {
                Thread.sleep(ready ? 5 : 10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new NvmeException("interrupted while waiting for CSTS", e);
            }
        }
    }

    private static FabricQueue.Data heap(byte[] b, boolean toController) {
        return new FabricQueue.Data(MemorySegment.ofArray(b), 0, b.length, toController);
    }

    /** Sends one command and waits for it, turning an error status into an {@link NvmeStatusException}. */
    private Cqe call(FabricQueue q, byte[] sqe, FabricQueue.Data data, String what, boolean fabrics) {
        Cqe cqe = await(q.submit(sqe, data, what), options.connectTimeout(), target + ": " + what);
        if (!cqe.ok()) {
            throw new NvmeStatusException(what, fabrics, cqe.sct(), cqe.sc(), cqe.dnr(), cqe.dw0());
        }
        return cqe;
    }

    private static <T> T await(CompletableFuture<T> f, Duration timeout, String what) {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new NvmeConnectionException(what + ": no completion within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof NvmeException n) {
                throw n;
            }
            throw new NvmeException(what + " failed: " + c, c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException(what + ": interrupted", e);
        }
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
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
        return call(live().admin(), sqe, data, what, false);
    }

    /** @return every active namespace ID, ascending (Identify CNS 02h) */
    public List<Long> activeNamespaces() {
        List<Long> out = new ArrayList<>();
        long start = 0;
        while (true) {
            byte[] d = new byte[4096];
            admin(
                    Sqe.identify(Sqe.CNS_ACTIVE_NS_LIST, start, d.length),
                    heap(d, false),
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
        admin(Sqe.identify(Sqe.CNS_NAMESPACE, nsid, d.length), heap(d, false), "Identify Namespace(nsid=" + nsid + ")");
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
                    heap(d, false),
                    "Get Log Page(discovery, offset=" + (offset + off) + ", length=" + n + ")");
            System.arraycopy(d, 0, out, off, n);
        }
        return out;
    }

    /**
     * Reads {@code buffer.byteSize()} bytes (a multiple of the block size) from {@code lba} into {@code buffer}.
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
        long chunk = Math.min(live().maxTransfer(), 65536L * bs) / bs * bs;
        if (len <= chunk) { // one command: no list, no combined future
            return io(
                    Sqe.readWrite(write, nsid, lba, (int) (len / bs)),
                    new FabricQueue.Data(buffer, 0, (int) len, write),
                    null);
        }
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        for (long off = 0; off < len; off += chunk) {
            int n = (int) Math.min(chunk, len - off);
            long slba = lba + off / bs;
            int blocks = n / bs;
            // no description: the queue and io() name the command from its bytes only when it fails
            parts.add(io(Sqe.readWrite(write, nsid, slba, blocks), new FabricQueue.Data(buffer, off, n, write), null));
        }
        return all(parts);
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
        return all(parts);
    }

    /** @param what names the command; null: named from its bytes ({@link Sqe#describe}) only if it fails */
    private CompletableFuture<Void> io(byte[] sqe, FabricQueue.Data data, String what) {
        Session s = live();
        if (s.io().isEmpty()) {
            throw new IllegalStateException(
                    (what != null ? what : Sqe.describe(sqe)) + ": a discovery controller has no I/O queues");
        }
        FabricQueue q = s.io().get(Math.floorMod(nextQueue.getAndIncrement(), s.io().size()));
        NvmeException down = q.failure();
        if (down != null) {
            return CompletableFuture.failedFuture(new NvmeConnectionException(
                    (what != null ? what : Sqe.describe(sqe)) + ": the connection is down (" + down.getMessage()
                            + "); call reconnect()",
                    down));
        }
        // Completes with the failure itself (never wrapped in a CompletionException), like a split transfer's all().
        CompletableFuture<Void> result = new CompletableFuture<>();
        q.submit(sqe, data, what).whenComplete((cqe, t) -> {
            if (t != null) {
                result.completeExceptionally(unwrap(t));
            } else if (!cqe.ok()) {
                result.completeExceptionally(new NvmeStatusException(
                        what != null ? what : Sqe.describe(sqe), false, cqe.sct(), cqe.sc(), cqe.dnr(), cqe.dw0()));
            } else {
                result.complete(null);
            }
        });
        return result;
    }

    /** Completes when every part has; fails with the first part's failure, unwrapped. */
    private static CompletableFuture<Void> all(List<CompletableFuture<Void>> parts) {
        if (parts.size() == 1) {
            return parts.get(0).exceptionallyCompose(t -> CompletableFuture.failedFuture(unwrap(t)));
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        AtomicInteger left = new AtomicInteger(parts.size());
        for (CompletableFuture<Void> p : parts) {
            p.whenComplete((v, t) -> {
                if (t != null) {
                    result.completeExceptionally(unwrap(t));
                } else if (left.decrementAndGet() == 0) {
                    result.complete(null);
                }
            });
        }
        return result;
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
            drop(old);
        }
        namespaces.clear();
        session = bringUp();
    }

    private static void drop(Session s) {
        if (s.keepAlive() != null) {
            s.keepAlive().cancel(false);
        }
        Closeables.closeAll(connections(s.io(), s.admin(), s.rdma()));
    }

    /** Shuts the controller down (CC.SHN, wait for CSTS.SHST) and closes every connection. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
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
        steps.add(() -> shutDown(s));
        steps.add(s.admin());
        steps.add(s.rdma());
        Closeables.closeAll(steps);
    }

    /** CC.SHN and a wait for CSTS.SHST; nothing to do when the admin connection is gone already. */
    private void shutDown(Session s) {
        if (s.admin().failure() != null) {
            return;
        }
        try {
            int cc = (int) (1 | (s.cap() >>> 48 & 0xf) << 7 | 6 << 16 | 4 << 20 | 1 << 14);
            call(
                    s.admin(),
                    Sqe.propertySet(Sqe.PROP_CC, false, cc & 0xffffffffL),
                    FabricQueue.Data.NONE,
                    "Property Set CC.SHN",
                    true);
            waitStatus(s.admin(), 5000, false);
        } catch (NvmeConnectionException e) {
            // the connection dropped while shutting down: the target tears the controller down itself
        }
    }

    @Override
    public String toString() {
        Session s = session;
        return "Controller[" + target + " " + subsystemNqn
                + (s == null ? ", closed" : ", cntlid=" + s.cntlid() + ", " + s.io().size() + " I/O queues") + "]";
    }
}
