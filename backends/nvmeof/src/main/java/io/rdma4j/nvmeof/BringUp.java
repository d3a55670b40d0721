package io.rdma4j.nvmeof;

import io.rdma4j.Closeables;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.PolledIo;
import io.rdma4j.nvmeof.internal.Sqe;
import io.rdma4j.nvmeof.rdma.PolledRdmaQueue;
import io.rdma4j.nvmeof.rdma.RdmaQueue;
import io.rdma4j.nvmeof.rdma.RdmaResources;
import io.rdma4j.nvmeof.tcp.DrivenTcpQueue;
import io.rdma4j.nvmeof.tcp.PolledTcpQueue;
import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A controller's connection management, as the NVMe over Fabrics specification lays it out: opening the admin and I/O
 * queues on the target's transport, Connect, CAP, CC.EN, CSTS.RDY, Identify Controller, Number of Queues, the
 * keep-alive timer and the Asynchronous Event Requests; and, at the end, CC.SHN and CSTS.SHST. It owns no state beyond
 * how to connect: what one bring-up created is a {@link Session}, which {@link Controller} holds and replaces.
 */
final class BringUp {
    private static final int ADMIN_DEPTH = 32;
    private static final int ADMIN_MAX_DATA = 1 << 20;
    /** Admin and Fabrics commands may carry 8 KiB in-capsule (NVMe/TCP); Connect needs 1 KiB. */
    private static final int ADMIN_IN_CAPSULE = 8192;
    /** Upper bound on one command's transfer even where MDTS allows more: bounds per-PDU buffers. */
    private static final long MAX_COMMAND_BYTES = 4L << 20;

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
    private final AsyncEvents events;

    BringUp(
            Target target,
            String subsystemNqn,
            ConnectOptions options,
            HostIdentity identity,
            TcpQueue.Connector connector,
            AsyncEvents events) {
        this.target = target;
        this.subsystemNqn = subsystemNqn;
        this.options = options;
        this.identity = identity;
        this.connector = connector;
        this.discovery = subsystemNqn.equals(Controller.DISCOVERY_NQN);
        this.events = events;
    }

    private InetSocketAddress address() {
        return new InetSocketAddress(target.host(), target.port());
    }

    /** Brings the controller up: the admin queue, its Connect, CC.EN, Identify, the I/O queues and their Connects. */
    Session open() {
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
                    Calls.heap(connectData, true),
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
            call(
                    admin,
                    Sqe.identify(Sqe.CNS_CONTROLLER, 0, id.length),
                    Calls.heap(id, false),
                    "Identify Controller",
                    false);
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
                        0,
                        new PolledQids(0, 0),
                        0,
                        0);
            }
            int want = options.ioQueues() + options.polledQueues();
            int granted = call(
                            admin,
                            Sqe.setFeatures(Sqe.FID_NUMBER_OF_QUEUES, (want - 1) | (want - 1) << 16),
                            FabricQueue.Data.NONE,
                            "Set Features Number of Queues(" + want + ")",
                            false)
                    .dw0();
            int grantedQueues = Math.min((granted & 0xffff) + 1, (granted >>> 16) + 1);
            int queues = Math.min(options.ioQueues(), grantedQueues);
            PolledQids polled = new PolledQids(queues + 1, Math.min(options.polledQueues(), grantedQueues - queues));
            int depthLimit = (int) Math.min(65535, (cap & 0xffff) + 1);
            if (info.maxcmd() > 0) {
                depthLimit = Math.min(depthLimit, info.maxcmd());
            }
            int depth = Math.min(options.queueDepth(), depthLimit);
            int inCapsule = (int) Math.min(info.inCapsuleDataBytes(), maxTransfer);
            for (int q = 1; q <= queues; q++) {
                byte[] d = Sqe.connectData(identity.idBytes(), cntlid, subsystemNqn, identity.nqn());
                if (options.polledIo() && target.transport() == Target.Transport.TCP) {
                    // the polled queue sends its own Connect before its thread starts
                    io.add(DrivenTcpQueue.open(
                            address(),
                            options.sourceAddress(),
                            target + " qid " + q,
                            tcpConfig(q, depth, options.ioTimeout(), (int) maxTransfer, inCapsule),
                            d,
                            options.busyPoll().toNanos()));
                    continue;
                }
                FabricQueue queue =
                        openQueue(rdma, q, depth, cntlid, options.ioTimeout(), (int) maxTransfer, inCapsule);
                io.add(queue);
                call(
                        queue,
                        Sqe.connect(q, depth - 1, 0, false),
                        Calls.heap(d, true),
                        "Connect(qid=" + q + ", cntlid=" + cntlid + ")",
                        true);
            }
            ScheduledFuture<?> ka = null;
            if (kato > 0 && info.kas() != 0) {
                long period = Math.max(100, kato / 2);
                ka = KEEP_ALIVE.scheduleAtFixedRate(() -> keepAlive(admin, io), period, period, TimeUnit.MILLISECONDS);
            }
            int aers = events.arm(admin, List.copyOf(io), info);
            return new Session(
                    admin,
                    List.copyOf(io),
                    rdma,
                    cntlid,
                    cap,
                    version,
                    info,
                    maxTransfer,
                    depth,
                    ka,
                    aers,
                    polled,
                    inCapsule,
                    depthLimit);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, connections(io, admin, rdma));
        }
    }

    /** @return what a session holds, in the order it closes: I/O queues, the admin queue, the RDMA registrations */
    static List<AutoCloseable> connections(List<FabricQueue> io, FabricQueue admin, RdmaResources rdma) {
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
                        tcpConfig(qid, depth, ioTimeout, maxData, inCapsule),
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
     * Opens a polled I/O queue on reserved queue ID {@code qid} of session {@code s}, of {@code depth} commands (an
     * NVMe/RDMA queue holds at least two), its Connect sent and answered.
     */
    PolledIo openPolled(Session s, int qid, int depth) {
        byte[] connectData = Sqe.connectData(identity.idBytes(), s.cntlid(), subsystemNqn, identity.nqn());
        String name = target + " polled qid " + qid;
        return switch (target.transport()) {
            case TCP ->
                PolledTcpQueue.open(
                        address(),
                        options.sourceAddress(),
                        name,
                        tcpConfig(qid, depth, options.ioTimeout(), (int) s.maxTransfer(), s.inCapsule()),
                        connectData);
            case RDMA ->
                PolledRdmaQueue.open(
                        target.host(),
                        target.port(),
                        options.sourceAddress(),
                        name,
                        new RdmaQueue.Config(
                                qid,
                                Math.max(2, depth),
                                s.cntlid(),
                                options.connectTimeout(),
                                options.ioTimeout(),
                                (int) Math.min(s.maxTransfer(), 0xffffff),
                                s.inCapsule()),
                        s.rdma(),
                        connectData);
        };
    }

    private TcpQueue.Config tcpConfig(int qid, int depth, Duration ioTimeout, int maxData, int inCapsule) {
        return new TcpQueue.Config(
                qid,
                depth,
                options.headerDigest(),
                options.dataDigest(),
                options.connectTimeout(),
                ioTimeout,
                maxData,
                inCapsule);
    }

    private void keepAlive(FabricQueue admin, List<FabricQueue> io) {
        if (admin.failure() != null) {
            return;
        }
        admin.submit(Sqe.keepAlive(), FabricQueue.Data.NONE, "Keep Alive").whenComplete((cqe, ex) -> {
            NvmeException why = ex != null
                    ? new NvmeConnectionException(
                            target + ": keep-alive failed: " + Calls.unwrap(ex).getMessage(), Calls.unwrap(ex))
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

    private Cqe call(FabricQueue q, byte[] sqe, FabricQueue.Data data, String what, boolean fabrics) {
        return Calls.call(q, sqe, data, what, fabrics, options.connectTimeout(), target);
    }

    /** CC.SHN and a wait for CSTS.SHST; nothing to do when the admin connection is gone already. */
    void shutDown(Session s) {
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

    /** Stops the keep-alive and closes every connection of {@code s}, collecting failures. */
    static void drop(Session s) {
        if (s.keepAlive() != null) {
            s.keepAlive().cancel(false);
        }
        Closeables.closeAll(connections(s.io(), s.admin(), s.rdma()));
    }
}
