package io.rdma4j.libfabric.engine;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.libfabric.AddressVector;
import io.rdma4j.libfabric.CompletionErrorException;
import io.rdma4j.libfabric.CompletionQueue;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.Endpoint;
import io.rdma4j.libfabric.Fabric;
import io.rdma4j.libfabric.FabricException;
import io.rdma4j.libfabric.Hints;
import io.rdma4j.libfabric.Info;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.libfabric.MemoryRegion;
import io.rdma4j.libfabric.RemoteRegion;
import io.rdma4j.topology.NicAttributes;
import io.rdma4j.topology.NicFilter;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The engine over libfabric RDM endpoints. Every lane has its own fabric, domain, completion queue, address vector and
 * endpoint (several lanes per device when asked), so lanes never share provider state; a registration is made on every
 * lane's domain. A connection is an address-vector entry of the peer's endpoint name.
 *
 * <p>Completion semantics: libfabric's default completion of a write (transmit complete, manual progress) does not mean
 * the bytes are placed at the target. The engine does not rely on it: it sends its notification record behind the data
 * on every lane that carried data, and each lane here is one ordered connection ({@code tcp;ofi_rxm}: one TCP stream
 * per endpoint pair; {@code shm}: one command queue), so the record lands after the chunks before it.
 *
 * <p>Provider choice for {@code auto}: efa, cxi, verbs, psm3, then shm (same host), then tcp.
 */
public final class LibfabricEngineBackend implements EngineBackend {
    private static final List<String> PREFERENCE = List.of("efa", "cxi", "verbs", "psm3", "shm", "tcp");
    private static final int MAX_CONNECTIONS = 1 << 16;

    private final String provider;
    private final String description;
    private final List<LaneDescriptor> descriptors;
    private final Lane[] lanes;
    private final long immediateMask;
    private final AtomicInteger nextHandle = new AtomicInteger();
    private final Map<Integer, Registration> registrations = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile boolean closed;

    /** One lane: an endpoint on its own domain, plus its connections and cached remote regions. Guarded by itself. */
    private static final class Lane {
        final int index;
        final Fabric fabric;
        final Domain domain;
        final CompletionQueue cq;
        final AddressVector av;
        final Endpoint ep;
        final io.rdma4j.libfabric.Completions batch;
        final byte[] name;
        long[] peerAddress = new long[16];
        int connections;
        /** Registration handle -> region on this lane's domain. */
        MemoryRegion[] regions = new MemoryRegion[16];

        final LongObjectCache remotes = new LongObjectCache();
        volatile String error;

        Lane(int index, Info info) {
            this.index = index;
            Fabric f = Fabric.open(info);
            try {
                this.fabric = f;
                this.domain = f.openDomain();
                this.cq = domain.openCompletionQueue(4096);
                // shm caps an address vector at its peer limit (256); others grow past the hint
                this.av = domain.openAddressVector(info.provider().startsWith("shm") ? 256 : 1024);
                this.ep = domain.openEndpoint(cq, av);
                this.batch = new io.rdma4j.libfabric.Completions(64);
                this.name = ep.name();
            } catch (RuntimeException e) {
                f.close();
                throw e;
            }
        }

        RemoteRegion remote(long key) {
            RemoteRegion r = remotes.get(key);
            if (r == null) {
                // the engine checked the range against the published length; the region here only carries the key
                r = new RemoteRegion(0, key, Long.MAX_VALUE);
                remotes.put(key, r);
            }
            return r;
        }

        void close() {
            batch.close();
            fabric.close();
        }
    }

    /** A registration on every lane. */
    private final class Registration implements BackendRegistration {
        final int handle;
        final long address;
        final long length;
        final MemoryRegion[] regions;
        volatile boolean open = true;

        Registration(int handle, long address, long length, MemoryRegion[] regions) {
            this.handle = handle;
            this.address = address;
            this.length = length;
            this.regions = regions;
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
            return regions[lane].remote().address();
        }

        @Override
        public long remoteKey(int lane) {
            return regions[lane].key();
        }

        @Override
        public void close() {
            if (!open) {
                return;
            }
            open = false;
            registrations.remove(handle);
            RuntimeException failure = null;
            for (int i = 0; i < lanes.length; i++) {
                Lane l = lanes[i];
                synchronized (l) {
                    if (handle < l.regions.length) {
                        l.regions[handle] = null;
                    }
                    try {
                        regions[i].close();
                    } catch (RuntimeException e) {
                        if (failure == null) {
                            failure = e;
                        } else {
                            failure.addSuppressed(e);
                        }
                    }
                }
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    private LibfabricEngineBackend(
            String provider, String description, List<LaneDescriptor> descriptors, Lane[] lanes, long cqDataSize) {
        this.provider = provider;
        this.description = description;
        this.descriptors = descriptors;
        this.lanes = lanes;
        this.immediateMask = cqDataSize >= 8 ? -1L : (1L << (cqDataSize * 8)) - 1;
    }

    /** Opens lanes on the configured (or best) provider: {@code lanesPerDevice} endpoints per fabric domain. */
    public static LibfabricEngineBackend open(BackendConfig config) {
        Libfabric.ensureAvailable();
        String want = config.provider();
        try (InfoList all =
                Libfabric.getinfo(want == null ? Hints.rdm() : Hints.rdm().provider(want))) {
            List<Info> usable = usable(all);
            if (usable.isEmpty()) {
                throw new BackendUnavailableException(
                        "libfabric offers no RDM provider with RMA, messages and 4 bytes of CQ data"
                                + (want == null ? "" : " for provider '" + want + "'")
                                + ". Libfabric.getinfo(Hints.rdm()) lists the RDM providers here",
                        null);
            }
            String chosen = want != null ? usable.getFirst().provider() : best(usable);
            String source = sourceAddress(config, chosen);
            if (source == null) {
                return open(config, chosen, usable);
            }
            // socket providers report one domain per interface: bind to the one that owns the source address, so an
            // engine never sends over an interface nobody named (loopback unless the user gives an address)
            try (InfoList bound =
                    Libfabric.getinfo(Hints.rdm().provider(chosen.split(";")[0]).sourceAddress(source))) {
                List<Info> local = usable(bound);
                if (local.isEmpty()) {
                    throw new BackendUnavailableException(
                            "libfabric provider " + chosen + " has no usable domain for source address " + source
                                    + ": give the address of a local interface (option sourceAddress or RDMA4J_FI_SOURCE_ADDRESS)",
                            null);
                }
                try {
                    return open(config, chosen, local);
                } catch (FabricException e) {
                    throw new BackendUnavailableException(
                            "libfabric provider " + chosen + " cannot open lanes bound to source address "
                                    + source + " (" + e.getMessage()
                                    + "): give the address of a local interface (option sourceAddress or "
                                    + "RDMA4J_FI_SOURCE_ADDRESS)",
                            e);
                }
            }
        }
    }

    /** Providers that run over the host's IP stack: their lanes bind to one interface address, loopback by default. */
    private static final List<String> SOCKET_PROVIDERS = List.of("tcp", "udp", "sockets");

    /**
     * The address socket providers bind to: {@link io.rdma4j.engine.spi.BackendOptions#sourceAddress()}, else
     * {@code RDMA4J_FI_SOURCE_ADDRESS}, else {@code 127.0.0.1}. Null for NIC providers (efa, verbs, cxi, shm), which
     * have no such choice.
     */
    static String sourceAddress(BackendConfig config, String provider) {
        String core = provider.toLowerCase(Locale.ROOT).split(";")[0];
        if (!SOCKET_PROVIDERS.contains(core)) {
            return null;
        }
        String s = config.options().sourceAddress();
        if (s == null || s.isBlank()) {
            s = System.getenv("RDMA4J_FI_SOURCE_ADDRESS");
        }
        return s == null || s.isBlank() ? "127.0.0.1" : s;
    }

    private static List<Info> usable(InfoList all) {
        List<Info> usable = new ArrayList<>();
        for (Info i : all) {
            if (i.cqDataSize() >= 4 && (i.caps() & Hints.DEFAULT_CAPS) == Hints.DEFAULT_CAPS) {
                usable.add(i);
            }
        }
        return usable;
    }

    /** Builds the lanes; the infos' list must stay open until this returns. */
    private static LibfabricEngineBackend open(BackendConfig config, String chosen, List<Info> usable) {
        // one device per distinct domain (NIC) of the chosen provider, in libfabric's order: the several fabrics
        // tcp reports for one interface (each IPv4/IPv6 address) are the same device
        Map<String, Info> devices = new LinkedHashMap<>();
        for (Info i : usable) {
            if (i.provider().equals(chosen)) {
                devices.putIfAbsent(i.domain(), i);
            }
        }
        NicFilter filter = NicFilter.parse(config.options().nicFilter());
        List<Info> picked = new ArrayList<>();
        for (Info i : devices.values()) {
            if (allowed(filter, i.domain())) {
                picked.add(i);
            }
        }
        if (picked.isEmpty()) {
            throw new BackendUnavailableException(
                    "the NIC filter '" + filter + "' excludes every " + chosen + " domain "
                            + devices.values().stream().map(Info::domain).toList(),
                    null);
        }
        List<LaneDescriptor> descriptors = new ArrayList<>();
        List<Lane> lanes = new ArrayList<>();
        long cqData = Long.MAX_VALUE;
        Function<String, NicAttributes> topology = NicAttributes.scanLive();
        try {
            for (Info i : picked) {
                NicAttributes nic = topology.apply(deviceName(i.domain()));
                String pci = nic.pciAddress();
                int numa = nic.numaNode();
                double gbps = nic.rateGbps();
                // max_msg_size SIZE_MAX reads as a negative long: no limit
                for (int k = 0; k < config.lanesPerDevice(); k++) {
                    int index = lanes.size();
                    lanes.add(new Lane(index, i));
                    descriptors.add(new LaneDescriptor(
                            index, i.domain(), pci, numa, gbps, i.maxMsgSize() <= 0 ? Long.MAX_VALUE : i.maxMsgSize()));
                    cqData = Math.min(cqData, i.cqDataSize());
                }
            }
        } catch (RuntimeException e) {
            for (Lane l : lanes) {
                l.close();
            }
            throw e;
        }
        Info first = picked.getFirst();
        String desc = "libfabric " + Libfabric.versionString() + " " + chosen + " on "
                + picked.stream().map(Info::domain).distinct().toList() + " (mr_mode 0x"
                + Integer.toHexString(first.mrMode()) + ", " + config.lanesPerDevice() + " endpoint(s) per domain)";
        return new LibfabricEngineBackend(chosen, desc, List.copyOf(descriptors), lanes.toArray(new Lane[0]), cqData);
    }

    private static String best(List<Info> infos) {
        for (String p : PREFERENCE) {
            for (Info i : infos) {
                String core = i.provider().toLowerCase(Locale.ROOT);
                if (core.equals(p) || core.startsWith(p + ";")) {
                    return i.provider();
                }
            }
        }
        return infos.getFirst().provider();
    }

    /**
     * Whether the NIC filter lets domain {@code domain} through: {@link NicFilter}'s rules (NCCL_IB_HCA's prefix,
     * {@code =} exact, {@code ^} exclude, {@code :port}), matched against the domain's device name. A domain counts as
     * port 1 of its device, the port ibverbs uses too, so {@code name:port} entries mean the same in both backends.
     */
    static boolean allowed(NicFilter filter, String domain) {
        return filter.allows(deviceName(domain), 1);
    }

    /** The device behind a domain name: EFA's {@code rdmap0s6-rdm} and {@code -dgrm} domains are device rdmap0s6. */
    static String deviceName(String domain) {
        return domain.endsWith("-rdm") || domain.endsWith("-dgrm")
                ? domain.substring(0, domain.lastIndexOf('-'))
                : domain;
    }

    @Override
    public String name() {
        return "libfabric";
    }

    @Override
    public String provider() {
        return provider;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public List<LaneDescriptor> lanes() {
        return descriptors;
    }

    @Override
    public int immediateBytes() {
        return immediateMask == -1L ? 8 : Long.numberOfTrailingZeros(~immediateMask) / 8;
    }

    private void checkOpen() {
        if (closed) {
            throw new io.rdma4j.ClosedException("libfabric engine backend");
        }
    }

    private Lane lane(int lane) {
        if (lane < 0 || lane >= lanes.length) {
            throw new IndexOutOfBoundsException(
                    "lane " + lane + " does not exist; this backend has lanes 0.." + (lanes.length - 1));
        }
        return lanes[lane];
    }

    @Override
    public BackendRegistration register(MemorySegment segment) {
        checkOpen();
        io.rdma4j.ffi.Segments.requireNative(segment, "segment to register");
        return registerOnEveryLane(segment.address(), segment.byteSize(), l -> l.domain.register(segment));
    }

    /**
     * CUDA memory through {@code fi_mr_regattr} with {@code FI_HMEM_CUDA} and the device ordinal on every lane's
     * domain, when the provider offers {@code FI_HMEM}; otherwise the domain's error saying why (the engine then
     * stages).
     */
    @Override
    public BackendRegistration registerDevice(DeviceMemory memory) {
        checkOpen();
        if (memory.kind() != DeviceMemory.Kind.CUDA) {
            throw new io.rdma4j.DeviceRegistrationException(
                    "libfabric backend registers CUDA memory only, not " + memory.kind());
        }
        for (Lane l : lanes) {
            String why = l.domain.hmemUnsupported("CUDA");
            if (why != null) {
                throw new io.rdma4j.DeviceRegistrationException(why);
            }
        }
        try {
            return registerOnEveryLane(
                    memory.address(),
                    memory.length(),
                    l -> l.domain.registerCuda(
                            memory.address(), memory.length(), memory.deviceOrdinal(), Domain.ACCESS_ALL));
        } catch (FabricException e) {
            // FI_HMEM is offered but this memory is not registrable (libfabric's CUDA support not initialized, a
            // foreign
            // pointer): the engine can still stage it
            throw new io.rdma4j.DeviceRegistrationException(e.getMessage(), e);
        }
    }

    private BackendRegistration registerOnEveryLane(
            long address, long length, java.util.function.Function<Lane, MemoryRegion> register) {
        int handle = nextHandle.getAndIncrement();
        MemoryRegion[] regions = new MemoryRegion[lanes.length];
        try {
            for (int i = 0; i < lanes.length; i++) {
                Lane l = lanes[i];
                synchronized (l) {
                    regions[i] = register.apply(l);
                    if (handle >= l.regions.length) {
                        l.regions = Arrays.copyOf(l.regions, Math.max(handle + 1, l.regions.length * 2));
                    }
                    l.regions[handle] = regions[i];
                }
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < lanes.length; i++) {
                if (regions[i] != null) {
                    synchronized (lanes[i]) {
                        lanes[i].regions[handle] = null;
                        regions[i].close();
                    }
                }
            }
            throw e;
        }
        Registration r = new Registration(handle, address, length, regions);
        registrations.put(handle, r);
        return r;
    }

    @Override
    public int prepareConnection(int lane) {
        checkOpen();
        Lane l = lane(lane);
        synchronized (l) {
            if (l.connections == MAX_CONNECTIONS) {
                throw new IllegalStateException(
                        "lane " + lane + " has " + MAX_CONNECTIONS + " connections: no room for another");
            }
            if (l.connections == l.peerAddress.length) {
                l.peerAddress = Arrays.copyOf(l.peerAddress, l.peerAddress.length * 2);
            }
            l.peerAddress[l.connections] = -1;
            return l.connections++;
        }
    }

    @Override
    public byte[] endpointInfo(int lane, int connection) {
        Lane l = lane(lane);
        checkConnection(l, connection);
        return l.name.clone();
    }

    private static void checkConnection(Lane l, int connection) {
        if (connection < 0 || connection >= l.connections) {
            throw new IllegalArgumentException(
                    "lane " + l.index + " has no connection " + connection + " (prepareConnection first)");
        }
    }

    @Override
    public void connect(int lane, int connection, byte[] remoteEndpointInfo) {
        checkOpen();
        Lane l = lane(lane);
        if (remoteEndpointInfo == null || remoteEndpointInfo.length == 0) {
            throw new IllegalArgumentException("lane " + lane + ": the peer's endpoint name is empty");
        }
        synchronized (l) {
            checkConnection(l, connection);
            l.peerAddress[connection] = l.av.insert(remoteEndpointInfo);
        }
    }

    @Override
    public void disconnect(int lane, int connection) {
        Lane l = lane(lane);
        synchronized (l) {
            if (connection >= 0 && connection < l.connections) {
                // the address-vector entry stays (FI_AV_TABLE indexes are positional); the connection is just unusable
                // now
                l.peerAddress[connection] = -1;
            }
        }
    }

    private int status(Lane l, long rc, String function) {
        if (rc == Endpoint.OK) {
            return OK;
        }
        if (rc == Endpoint.BACK_PRESSURED) {
            return BACK_PRESSURED;
        }
        l.error = function + " on lane " + l.index + " failed: " + Libfabric.statusText(rc) + " (" + (-rc) + ")";
        return FAILED;
    }

    private int misuse(Lane l, RuntimeException e) {
        l.error = "lane " + l.index + ": " + e.getMessage();
        return FAILED;
    }

    private MemoryRegion region(Lane l, int handle) {
        MemoryRegion[] rs = l.regions;
        return handle >= 0 && handle < rs.length ? rs[handle] : null;
    }

    /** The peer's AV address for {@code connection}, or -1 after recording on the lane why nothing can be posted. */
    private static long target(Lane l, int lane, int connection, MemoryRegion mr, int localHandle) {
        long peer = connection >= 0 && connection < l.connections ? l.peerAddress[connection] : -1;
        if (mr == null || peer < 0) {
            l.error = "lane " + lane + ": "
                    + (mr == null
                            ? "registration " + localHandle + " is unknown"
                            : "connection " + connection + " is not connected");
            return -1;
        }
        return peer;
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
        if (lane < 0 || lane >= lanes.length) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        Lane l = lanes[lane];
        synchronized (l) {
            MemoryRegion mr = region(l, localHandle);
            long peer = target(l, lane, connection, mr, localHandle);
            if (peer < 0) {
                return FAILED;
            }
            try {
                return status(
                        l,
                        l.ep.write(
                                mr,
                                localAddress - mr.address(),
                                length,
                                peer,
                                l.remote(remoteKey),
                                remoteAddress,
                                context),
                        "fi_write");
            } catch (RuntimeException e) {
                return misuse(l, e);
            }
        }
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
        if (lane < 0 || lane >= lanes.length) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        Lane l = lanes[lane];
        synchronized (l) {
            MemoryRegion mr = region(l, localHandle);
            long peer = target(l, lane, connection, mr, localHandle);
            if (peer < 0) {
                return FAILED;
            }
            try {
                return status(
                        l,
                        l.ep.writeData(
                                mr,
                                localAddress - mr.address(),
                                length,
                                immediate & 0xFFFFFFFFL & immediateMask,
                                peer,
                                l.remote(remoteKey),
                                remoteAddress,
                                context),
                        "fi_writedata");
            } catch (RuntimeException e) {
                return misuse(l, e);
            }
        }
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
        if (lane < 0 || lane >= lanes.length) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        Lane l = lanes[lane];
        synchronized (l) {
            MemoryRegion mr = region(l, localHandle);
            long peer = target(l, lane, connection, mr, localHandle);
            if (peer < 0) {
                return FAILED;
            }
            try {
                return status(
                        l,
                        l.ep.read(
                                mr,
                                localAddress - mr.address(),
                                length,
                                peer,
                                l.remote(remoteKey),
                                remoteAddress,
                                context),
                        "fi_read");
            } catch (RuntimeException e) {
                return misuse(l, e);
            }
        }
    }

    @Override
    public int poll(int lane, Completions out) {
        out.clear();
        Lane l = lanes[lane];
        synchronized (l) {
            if (closed) {
                return 0;
            }
            io.rdma4j.libfabric.Completions b = l.batch;
            // read no more than the caller can take: what stays in the completion queue comes with the next poll
            int want = Math.min(out.capacity(), b.capacity());
            int n;
            try {
                n = l.cq.read(b, want);
            } catch (CompletionErrorException e) {
                boolean remote = (e.flags() & (FI_REMOTE_WRITE | FI_REMOTE_READ)) != 0 || e.context() == 0;
                out.addError(
                        remote ? Completions.REMOTE_IMMEDIATE : Completions.LOCAL,
                        e.context(),
                        Math.max(1, Math.abs(e.providerErrno())),
                        e.getMessage());
                return out.count;
            } catch (RuntimeException e) {
                l.error = "fi_cq_read on lane " + lane + " failed: " + e.getMessage();
                return 0;
            }
            for (int i = 0; i < n; i++) {
                if (b.hasRemoteData(i)) {
                    out.add(Completions.REMOTE_IMMEDIATE, 0, (int) b.data(i));
                } else if (b.context(i) != 0 || (b.flags(i) & FI_REMOTE_WRITE) == 0) {
                    out.add(Completions.LOCAL, b.context(i), 0);
                }
            }
            return out.count;
        }
    }

    /** {@code FI_REMOTE_READ} and {@code FI_REMOTE_WRITE} completion flags (fabric.h: 1ULL << 12, 1ULL << 13). */
    private static final long FI_REMOTE_READ = 1L << 12;

    private static final long FI_REMOTE_WRITE = 1L << 13;

    @Override
    public String laneError(int lane) {
        return lane(lane).error;
    }

    @Override
    public boolean recover(int lane) {
        Lane l = lane(lane);
        synchronized (l) {
            if (closed || !l.ep.isOpen()) {
                return false;
            }
            // an RDM endpoint survives a failed operation: the error was per operation, the lane is usable again
            l.error = null;
            return true;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (Registration r : List.copyOf(registrations.values())) {
            try {
                r.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        for (Lane l : lanes) {
            synchronized (l) {
                try {
                    l.close();
                } catch (RuntimeException e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** A tiny open-addressing map from long keys to remote regions: looked up per chunk without boxing. */
    static final class LongObjectCache {
        private long[] keys = new long[16];
        private RemoteRegion[] values = new RemoteRegion[16];
        private int size;

        RemoteRegion get(long key) {
            int mask = keys.length - 1;
            for (int i = mix(key) & mask; ; i = (i + 1) & mask) {
                RemoteRegion v = values[i];
                if (v == null) {
                    return null;
                }
                if (keys[i] == key) {
                    return v;
                }
            }
        }

        void put(long key, RemoteRegion value) {
            if ((size + 1) * 2 > keys.length) {
                long[] ok = keys;
                RemoteRegion[] ov = values;
                keys = new long[ok.length * 2];
                values = new RemoteRegion[ov.length * 2];
                size = 0;
                for (int i = 0; i < ok.length; i++) {
                    if (ov[i] != null) {
                        put(ok[i], ov[i]);
                    }
                }
            }
            int mask = keys.length - 1;
            int i = mix(key) & mask;
            while (values[i] != null && keys[i] != key) {
                i = (i + 1) & mask;
            }
            if (values[i] == null) {
                size++;
            }
            keys[i] = key;
            values[i] = value;
        }

        private static int mix(long k) {
            long h = k * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32));
        }
    }
}
