package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.LibRdmacm;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.util.List;

/**
 * Entry points of the verbs binding: availability probes (never throw), the device list, and the helpers of the
 * reference Python bindings ({@link #localQpInfo}, {@link #connectRc}).
 */
public final class Verbs {
    private Verbs() {}

    /** @return true if libibverbs loaded (devices may still be absent: see {@link #deviceNames()}) */
    public static boolean isAvailable() {
        return LibIbverbs.LIB.isAvailable();
    }

    /** @return why libibverbs did not load, or null */
    public static Throwable unavailabilityCause() {
        return LibIbverbs.LIB.unavailabilityCause();
    }

    /** Throws one clear error naming the package to install when libibverbs is absent. */
    public static void ensureAvailable() {
        LibIbverbs.LIB.ensureAvailable();
    }

    /** @return true if librdmacm loaded */
    public static boolean isRdmaCmAvailable() {
        return LibRdmacm.LIB.isAvailable();
    }

    /** @return the names of the RDMA devices present; empty when there is none */
    public static List<String> deviceNames() {
        try (DeviceList list = DeviceList.open()) {
            return list.devices().stream().map(DeviceList.Device::name).toList();
        }
    }

    /** Opens the device named {@code name} (or the first one when null); fails clearly when there is none. */
    public static Context openDevice(String name) {
        try (DeviceList list = DeviceList.open()) {
            return list.get(name).open();
        }
    }

    /**
     * The connection information of {@code qp} to send to its peer: qp number, the queue pair's starting PSN, the
     * port's LID, the GID at {@code gidIndex} (zero when {@code gidIndex} is negative, for InfiniBand without GRH), the
     * port and its active MTU.
     */
    public static QpInfo localQpInfo(QueuePair qp, int port, int gidIndex) {
        Context ctx = qp.context();
        PortAttr pa = ctx.queryPort(port);
        byte[] gid = gidIndex < 0 ? new byte[16] : ctx.queryGid(port, gidIndex);
        return new QpInfo(qp.qpNum(), qp.localPsn(), pa.lid(), gid, port, pa.activeMtu());
    }

    /**
     * Takes an RC queue pair from RESET or INIT (any other state is reset first) through INIT and RTR to RTS, connected
     * to {@code remote}, with the smaller of the two ports' MTUs and the default {@link RcOptions}.
     *
     * @param access the remote access this side grants ({@code IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ}...)
     */
    public static void connectRc(QueuePair qp, QpInfo remote, int port, int gidIndex, int access) {
        connectRc(qp, remote, port, gidIndex, access, RcOptions.DEFAULT);
    }

    /** {@link #connectRc(QueuePair, QpInfo, int, int, int)} with explicit transport attributes. */
    public static void connectRc(QueuePair qp, QpInfo remote, int port, int gidIndex, int access, RcOptions o) {
        if (qp.type() != VerbsH.IBV_QPT_RC) {
            throw new IllegalArgumentException("connectRc needs an RC queue pair; " + qp + " is " + qp.typeName());
        }
        PortAttr pa = qp.context().queryPort(port);
        int mtu = Math.min(pa.activeMtu(), remote.mtu());
        if (qp.state() != VerbsH.IBV_QPS_RESET && qp.state() != VerbsH.IBV_QPS_INIT) {
            qp.modify(new QpAttr().state(VerbsH.IBV_QPS_RESET));
        }
        // INIT -> INIT is legal and keeps receives posted in INIT (so a peer's first write with immediate finds one)
        qp.modify(
                new QpAttr().state(VerbsH.IBV_QPS_INIT).pkeyIndex(0).port(port).accessFlags(access));
        AhAttr ah = new AhAttr().dlid(remote.lid()).sl(o.serviceLevel()).port(port);
        boolean global = gidIndex >= 0 && !remote.gidIsZero();
        if (global || pa.linkLayer() == VerbsH.IBV_LINK_LAYER_ETHERNET) {
            if (gidIndex < 0) {
                throw new IllegalArgumentException("port " + port
                        + " is RoCE (Ethernet link layer): pass a GID index (see Context.findRoceV2Ipv4GidIndex)");
            }
            ah.global(remote.gid(), gidIndex, o.hopLimit(), o.trafficClass(), 0);
        }
        qp.modify(new QpAttr()
                .state(VerbsH.IBV_QPS_RTR)
                .pathMtu(mtu)
                .destQpNum(remote.qpNum())
                .rqPsn(remote.psn())
                .maxDestRdAtomic(
                        Math.min(o.maxDestRdAtomic(), qp.context().deviceAttr().maxQpRdAtom()))
                .minRnrTimer(o.minRnrTimer())
                .ahAttr(ah));
        qp.modify(new QpAttr()
                .state(VerbsH.IBV_QPS_RTS)
                .sqPsn(qp.localPsn())
                .timeout(o.timeout())
                .retryCnt(o.retryCount())
                .rnrRetry(o.rnrRetry())
                .maxRdAtomic(Math.min(o.maxRdAtomic(), qp.context().deviceAttr().maxQpInitRdAtom())));
    }

    /**
     * Transport attributes of an RC connection.
     *
     * @param timeout local ACK timeout, 4.096 us * 2^timeout (14: about 67 ms)
     * @param retryCount transport retries, 0-7
     * @param rnrRetry receiver-not-ready retries, 0-7 (7: infinite)
     * @param minRnrTimer RNR NAK timer code (12: 0.64 ms)
     * @param maxRdAtomic outstanding RDMA reads/atomics this side initiates
     * @param maxDestRdAtomic outstanding RDMA reads/atomics this side accepts
     * @param hopLimit GRH hop limit
     * @param trafficClass GRH traffic class
     * @param serviceLevel service level
     */
    public record RcOptions(
            int timeout,
            int retryCount,
            int rnrRetry,
            int minRnrTimer,
            int maxRdAtomic,
            int maxDestRdAtomic,
            int hopLimit,
            int trafficClass,
            int serviceLevel) {
        public static final RcOptions DEFAULT = new RcOptions(14, 7, 7, 12, 16, 16, 64, 0, 0);
    }
}
