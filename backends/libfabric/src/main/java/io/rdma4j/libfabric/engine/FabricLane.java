package io.rdma4j.libfabric.engine;

import static io.rdma4j.engine.spi.EngineBackend.BACK_PRESSURED;
import static io.rdma4j.engine.spi.EngineBackend.FAILED;
import static io.rdma4j.engine.spi.EngineBackend.OK;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.libfabric.AddressVector;
import io.rdma4j.libfabric.CompletionErrorException;
import io.rdma4j.libfabric.CompletionQueue;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.Endpoint;
import io.rdma4j.libfabric.Fabric;
import io.rdma4j.libfabric.FabricException;
import io.rdma4j.libfabric.Info;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.libfabric.MemoryRegion;
import io.rdma4j.libfabric.RemoteRegion;
import java.util.Arrays;
import java.util.function.Function;

/**
 * One lane: an RDM endpoint on its own fabric and domain, its table of connections (peer address-vector entries), its
 * table of memory regions by registration handle, and its data path (post and poll). Every method runs under this
 * lane's lock, control calls and the progress thread alike: an endpoint takes posts from one thread at a time, and the
 * lock keeps a control call's address-vector insert, registration or close off a post in progress.
 */
final class FabricLane {
    static final int MAX_CONNECTIONS = 1 << 16;

    /** Operations {@link #post} makes. */
    static final int WRITE = 0;

    static final int WRITE_DATA = 1;
    static final int READ = 2;

    /** {@code FI_REMOTE_READ} and {@code FI_REMOTE_WRITE} completion flags (fabric.h: 1ULL << 12, 1ULL << 13). */
    private static final long FI_REMOTE_READ = 1L << 12;

    private static final long FI_REMOTE_WRITE = 1L << 13;
    /**
     * The remote CQ data of a plain write sent as {@code fi_writedata} (see {@link #dataCarried}): no notification. Bit
     * 32, beyond every notification's 32-bit immediate (the engine's immediate 0, inbox 0's slot 0 vouching for lane 0,
     * was taken for it while this was 0, and that notification never arrived).
     */
    static final long NO_NOTICE = 1L << 32;

    final int index;
    private final Fabric fabric;
    private final Domain domain;
    private final CompletionQueue cq;
    private final AddressVector av;
    private final Endpoint ep;
    private final io.rdma4j.libfabric.Completions batch;
    private final byte[] name;
    /**
     * Writes up to this many bytes carry remote CQ data {@link #NO_NOTICE} (shm with 8 bytes of CQ data, its inject
     * size, else 0). shm writes a plain write with {@code process_vm_writev}, a system call per write however small; a
     * write with data goes through its shared inject buffers instead, as {@code fi_rma_bw -o writedata} does. The
     * target's lane drops the completions carrying that data.
     */
    private final long dataCarried;
    /** The most pieces one {@link #postVector} takes: the endpoint's {@code fi_writemsg} limit (1: none). */
    private final int vectorLimit;
    /**
     * The most bytes one {@link #postVector} should carry: on shm its inject size (4 KiB), else no bound. A larger shm
     * write waits for the target's progress thread to copy it (process_vm_readv), where writes of up to 4 KiB complete
     * as they are injected. In {@code bench engine-batch}, vectors of four 4 KiB blocks made shm batches slower (2.5
     * and 1.9 GB/s against 3.5 and 3.8) and vectors of four 1 KiB blocks, one inject, faster (1.7 and 1.4 against 0.6
     * and 1.0); on tcp vectors of four 4 KiB blocks made batches up to three times faster (one message for four).
     */
    private final long vectorBytes;

    private long[] peerAddress = new long[16];
    private int connections;
    /** Registration handle -> region on this lane's domain. */
    private MemoryRegion[] regions = new MemoryRegion[16];

    private final RemoteRegionCache remotes = new RemoteRegionCache();
    /** What {@link #resolve} found for the post under way (posts hold the lane's lock). */
    private MemoryRegion postRegion;

    private long postPeer;
    /** {@link #postVector}'s local offsets, rewritten by every call (posts hold the lane's lock). */
    private final long[] localOffsets = new long[Endpoint.MAX_VECTOR];

    volatile String error;

    /** Opens the lane's fabric, domain, completion queue, address vector and endpoint on {@code info}. */
    FabricLane(int index, Info info) {
        this(index, info, announcesWork(info));
    }

    /**
     * Opens a lane; {@code waitFd} asks for a completion queue with an fd wait object, and a provider (or libfabric
     * release) that refuses one gets a plain queue: the lane then has no {@link #waitFd()}, and its progress thread
     * parks between polls as on shm.
     */
    FabricLane(int index, Info info, boolean waitFd) {
        this.index = index;
        Fabric f = Fabric.open(info);
        try {
            this.fabric = f;
            this.domain = f.openDomain();
            this.cq = openQueue(domain, waitFd);
            // shm caps an address vector at its peer limit (256); others grow past the hint
            this.av = domain.openAddressVector(info.provider().startsWith("shm") ? 256 : 1024);
            this.ep = domain.openEndpoint(cq, av);
            this.batch = new io.rdma4j.libfabric.Completions(64);
            this.name = ep.name();
            // only where the CQ data has room for NO_NOTICE beside every 32-bit immediate
            this.dataCarried =
                    info.provider().startsWith("shm") && info.cqDataSize() >= 8 ? Math.min(info.injectSize(), 4096) : 0;
            this.vectorLimit = Math.max(1, ep.vectorLimit());
            this.vectorBytes = dataCarried > 0 ? dataCarried : Long.MAX_VALUE;
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, f);
        }
    }

    /**
     * Whether lanes of {@code info}'s provider get a completion queue with an fd wait object, so an idle poller can
     * sleep in the kernel until a peer's bytes arrive: tcp (its sockets make the descriptor readable), proven here. shm
     * refuses fd waits; hardware providers place RMA without the target polling and keep plain polling until proven.
     */
    static boolean announcesWork(Info info) {
        return info.provider().startsWith("tcp");
    }

    private static CompletionQueue openQueue(Domain domain, boolean waitFd) {
        if (waitFd) {
            try {
                return domain.openCompletionQueue(4096, true);
            } catch (FabricException e) {
                // fi_cq_open or FI_GETWAIT refused the fd wait object: poll without one
            }
        }
        return domain.openCompletionQueue(4096, false);
    }

    /**
     * The completion queue's wait descriptor, or -1 when the lane has none ({@link #announcesWork}, or its provider
     * refused one).
     */
    int waitFd() {
        return cq.hasWaitFd() ? cq.waitFd() : -1;
    }

    /**
     * {@code fi_trywait} on the lane's queue: whether its thread may block on {@link #waitFd()} now. False when work is
     * already queued, or the lane is closed.
     */
    synchronized boolean tryWait() {
        return cq.isOpen() && cq.tryWait();
    }

    // ---- connections: address-vector entries of peers' endpoint names

    synchronized int prepareConnection() {
        if (connections == MAX_CONNECTIONS) {
            throw new IllegalStateException(
                    "lane " + index + " has " + MAX_CONNECTIONS + " connections: no room for another");
        }
        if (connections == peerAddress.length) {
            peerAddress = Arrays.copyOf(peerAddress, peerAddress.length * 2);
        }
        peerAddress[connections] = -1;
        return connections++;
    }

    synchronized byte[] endpointInfo(int connection) {
        checkConnection(connection);
        return name.clone();
    }

    synchronized void connect(int connection, byte[] remoteEndpointInfo) {
        checkConnection(connection);
        peerAddress[connection] = av.insert(remoteEndpointInfo);
    }

    synchronized void disconnect(int connection) {
        if (connection >= 0 && connection < connections) {
            // the address-vector entry stays (FI_AV_TABLE indexes are positional); the connection is just unusable now
            peerAddress[connection] = -1;
        }
    }

    private void checkConnection(int connection) {
        if (connection < 0 || connection >= connections) {
            throw new IllegalArgumentException(
                    "lane " + index + " has no connection " + connection + " (prepareConnection first)");
        }
    }

    // ---- regions by registration handle

    /** Registers memory on this lane's domain with {@code register} and publishes the region under {@code handle}. */
    synchronized MemoryRegion addRegion(int handle, Function<Domain, MemoryRegion> register) {
        MemoryRegion region = register.apply(domain);
        if (handle >= regions.length) {
            regions = Arrays.copyOf(regions, Math.max(handle + 1, regions.length * 2));
        }
        regions[handle] = region;
        return region;
    }

    /** @return why this lane's domain cannot register {@code kind} device memory, or null when it can */
    String hmemUnsupported(String kind) {
        return domain.hmemUnsupported(kind);
    }

    /** Unpublishes {@code handle} and closes its region, so no post races with the close. */
    synchronized void closeRegion(int handle, MemoryRegion region) {
        if (handle < regions.length) {
            regions[handle] = null;
        }
        region.close();
    }

    // ---- data path

    /**
     * Posts one operation ({@link #WRITE}, {@link #WRITE_DATA} with remote CQ data {@code data}, or {@link #READ});
     * never throws.
     *
     * @return {@code OK}, {@code BACK_PRESSURED}, or {@code FAILED} after recording why in {@link #error}
     */
    synchronized int post(
            int op,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long data,
            long context) {
        if (!resolve(localHandle, connection)) {
            return FAILED;
        }
        MemoryRegion mr = postRegion;
        long peer = postPeer;
        try {
            long offset = localAddress - mr.address();
            RemoteRegion remote = remote(remoteKey);
            return switch (op) {
                case WRITE ->
                    length <= dataCarried
                            ? status(
                                    ep.writeData(mr, offset, length, NO_NOTICE, peer, remote, remoteAddress, context),
                                    "fi_writedata")
                            : status(ep.write(mr, offset, length, peer, remote, remoteAddress, context), "fi_write");
                case WRITE_DATA ->
                    status(
                            ep.writeData(mr, offset, length, data, peer, remote, remoteAddress, context),
                            "fi_writedata");
                default -> status(ep.read(mr, offset, length, peer, remote, remoteAddress, context), "fi_read");
            };
        } catch (RuntimeException e) {
            error = "lane " + index + ": " + e.getMessage();
            return FAILED;
        }
    }

    /** @return the most pieces {@link #postVector} takes (1: none) */
    int vectorLimit() {
        return vectorLimit;
    }

    /** @return the most bytes one {@link #postVector} should carry */
    long vectorBytes() {
        return vectorBytes;
    }

    /**
     * Posts one {@code fi_writemsg} of {@code count} pieces, each from a local address to a remote one; never throws.
     *
     * @return {@code OK}, {@code BACK_PRESSURED}, or {@code FAILED} after recording why in {@link #error}
     */
    synchronized int postVector(
            int connection,
            int localHandle,
            long[] localAddresses,
            long[] remoteAddresses,
            long[] lengths,
            int count,
            long remoteKey,
            long context) {
        if (!resolve(localHandle, connection)) {
            return FAILED;
        }
        MemoryRegion mr = postRegion;
        long peer = postPeer;
        try {
            for (int i = 0; i < count; i++) {
                localOffsets[i] = localAddresses[i] - mr.address();
            }
            return status(
                    ep.writeMsg(mr, localOffsets, remoteAddresses, lengths, 0, count, peer, remote(remoteKey), context),
                    "fi_writemsg");
        } catch (RuntimeException e) {
            error = "lane " + index + ": " + e.getMessage();
            return FAILED;
        }
    }

    /**
     * Looks a post's registration and peer up into {@link #postRegion} and {@link #postPeer}; false after recording in
     * {@link #error} which is missing. Callers hold the lane's lock.
     */
    private boolean resolve(int localHandle, int connection) {
        postRegion = localHandle >= 0 && localHandle < regions.length ? regions[localHandle] : null;
        postPeer = connection >= 0 && connection < connections ? peerAddress[connection] : -1;
        if (postRegion != null && postPeer >= 0) {
            return true;
        }
        error = "lane " + index + ": "
                + (postRegion == null
                        ? "registration " + localHandle + " is unknown"
                        : "connection " + connection + " is not connected");
        return false;
    }

    private RemoteRegion remote(long key) {
        RemoteRegion r = remotes.get(key);
        if (r == null) {
            // the engine checked the range against the published length; the region here only carries the key
            r = new RemoteRegion(0, key, Long.MAX_VALUE);
            remotes.put(key, r);
        }
        return r;
    }

    private int status(long rc, String function) {
        if (rc == Endpoint.OK) {
            return OK;
        }
        if (rc == Endpoint.BACK_PRESSURED) {
            return BACK_PRESSURED;
        }
        error = function + " on lane " + index + " failed: " + Libfabric.statusText(rc) + " (" + (-rc) + ")";
        return FAILED;
    }

    /** Reads no more completions than {@code out} can take: what stays in the queue comes with the next poll. */
    synchronized int poll(Completions out, boolean closed) {
        if (closed) {
            return 0;
        }
        io.rdma4j.libfabric.Completions b = batch;
        int want = Math.min(out.capacity(), b.capacity());
        int n;
        try {
            n = cq.read(b, want);
        } catch (CompletionErrorException e) {
            boolean remote = (e.flags() & (FI_REMOTE_WRITE | FI_REMOTE_READ)) != 0 || e.context() == 0;
            out.addError(
                    remote ? Completions.REMOTE_IMMEDIATE : Completions.LOCAL,
                    e.context(),
                    Math.max(1, Math.abs(e.providerErrno())),
                    e.getMessage());
            return out.count;
        } catch (RuntimeException e) {
            error = "fi_cq_read on lane " + index + " failed: " + e.getMessage();
            return 0;
        }
        for (int i = 0; i < n; i++) {
            if (b.hasRemoteData(i)) {
                if (dataCarried == 0 || b.data(i) != NO_NOTICE) {
                    out.add(Completions.REMOTE_IMMEDIATE, 0, (int) b.data(i));
                }
            } else if (b.context(i) != 0 || (b.flags(i) & FI_REMOTE_WRITE) == 0) {
                out.add(Completions.LOCAL, b.context(i), 0);
            }
        }
        return out.count;
    }

    /** An RDM endpoint survives a failed operation: the error was per operation, the lane is usable again. */
    synchronized boolean recover(boolean closed) {
        if (closed || !ep.isOpen()) {
            return false;
        }
        error = null;
        return true;
    }

    synchronized void close() {
        Closeables.closeAll(batch, fabric);
    }
}
