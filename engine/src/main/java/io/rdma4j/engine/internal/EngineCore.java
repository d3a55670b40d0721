package io.rdma4j.engine.internal;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.ClosedException;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.ChecksumMismatchException;
import io.rdma4j.engine.LaneStats;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.Notifications;
import io.rdma4j.engine.Peer;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferBatch;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferRequest;
import io.rdma4j.engine.TransferTimeoutException;
import io.rdma4j.engine.UnknownBufferException;
import io.rdma4j.engine.UnknownPeerException;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.ffi.Segments;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.Backend;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.HandshakeClient;
import io.rdma4j.rendezvous.HandshakeHandler;
import io.rdma4j.rendezvous.HandshakeResult;
import io.rdma4j.rendezvous.HandshakeServer;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.LanePairing;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import io.rdma4j.rendezvous.PeerEvent;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/** The engine: lanes and progress threads over a backend, peers through the rendezvous, transfers planned and dispatched. */
public final class EngineCore implements TransferEngine {
    /**
     * Records in the notification ring we give each initiator ({@code -Drdma4j.engine.inboxSlots}, 1..256, default
     * 256, read when an engine opens). The initiator learns it from the inbox's size.
     */
    static final String INBOX_SLOTS_PROPERTY = "rdma4j.engine.inboxSlots";
    /** Longest pause between two reads of a CRC32C verdict that is not there yet. */
    private static final long VERDICT_POLL_MAX_NANOS = 1_000_000;
    /**
     * Engine and buffer names: the directory takes {@code [A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}}, and a published
     * buffer goes there as {@code engine/buffer}, so each part is at most 63 characters and has no {@code /}.
     */
    static final String NAME_RULE = "[A-Za-z0-9][A-Za-z0-9._:@-]{0,62}";
    private static final Pattern NAME = Pattern.compile(NAME_RULE);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final EngineConfig config;
    private final String name;
    private final long generation = PeerInfo.newGeneration();
    private final EngineBackend backend;
    private final Backend wireBackend;
    private final List<LaneDescriptor> laneDescriptors;
    private final LaneRuntime[] lanes;
    private final ProgressThread[] threads;
    private final Planner planner;
    private final LaneLevels levels;
    private final RegistrationCache registrations;
    private final ScheduledExecutorService timer;
    private final Rendezvous rendezvous;
    private final HandshakeServer handshakeServer;
    private volatile Rendezvous.Watch watch;
    private final Map<String, PeerLink> peers = new ConcurrentHashMap<>();
    private final Map<String, HandshakeClient> handshakeClients = new ConcurrentHashMap<>();
    private final Map<String, Inbound> inbound = new ConcurrentHashMap<>();
    private final AtomicReferenceArray<InChannel> inboxes = new AtomicReferenceArray<>(1 << 16);
    private final AtomicInteger nextInbox = new AtomicInteger(1);
    private final Map<String, Published> published = new ConcurrentHashMap<>();
    private final Map<Long, Published> publishedByGeneration = new ConcurrentHashMap<>();
    private final AtomicLong nextBufferGeneration = new AtomicLong(1);
    private final Set<TransferImpl> active = ConcurrentHashMap.newKeySet();
    private final NotificationQueue notes = new NotificationQueue();
    private final AtomicInteger rotation = new AtomicInteger();
    private final AtomicLong progressErrors = new AtomicLong();
    private final AtomicLong strayImmediates = new AtomicLong();
    private final long cooldownNanos;
    private final long maxCooldownNanos;
    private volatile Throwable lastProgressError;
    private volatile boolean closed;
    private final Volumes volumes;
    private final int inboxSlots;

    /** What we gave one initiator: connections from our lanes and its inbox. */
    private record Inbound(String initiator, long generation, int[] lanes, int[] connections, InChannel inbox, String inboxName) {
    }

    private record Published(String name, BufferImpls.Local buffer, long generation, Access access) {
    }

    private EngineCore(EngineConfig config, String name, EngineBackend backend) {
        this.config = config;
        this.name = name;
        this.backend = backend;
        this.inboxSlots = Integer.getInteger(INBOX_SLOTS_PROPERTY, NotificationRecord.MAX_SLOTS);
        if (inboxSlots < 1 || inboxSlots > NotificationRecord.MAX_SLOTS) {
            throw new IllegalArgumentException("-D" + INBOX_SLOTS_PROPERTY + " must be 1.."
                    + NotificationRecord.MAX_SLOTS + ", got " + inboxSlots);
        }
        this.wireBackend = backend.name().equalsIgnoreCase("ibverbs") ? Backend.IBVERBS : Backend.LIBFABRIC;
        this.laneDescriptors = List.copyOf(backend.lanes());
        this.planner = new Planner(config.chunkBytes(), config.smallThreshold());
        this.cooldownNanos = config.cooldown().toNanos();
        this.maxCooldownNanos = config.maxCooldown().toNanos();
        this.levels = TopologyLevels.create(config.topology(), laneDescriptors);
        this.registrations = new RegistrationCache(backend, 1024, Duration.ofSeconds(30));
        this.volumes = new Volumes(name, config.topology(), config.chunkBytes(), registrations);
        if (laneDescriptors.isEmpty() || laneDescriptors.size() > NotificationRecord.MAX_LANES) {
            throw new BackendUnavailableException("backend " + backend.name() + " offers " + laneDescriptors.size() + " lanes; the engine drives 1.."
                    + NotificationRecord.MAX_LANES + " (lower lanesPerNic or filter NICs)", null);
        }
        this.lanes = new LaneRuntime[laneDescriptors.size()];
        for (int i = 0; i < lanes.length; i++) {
            if (laneDescriptors.get(i).index() != i) {
                throw new IllegalStateException("backend " + backend.name() + " numbered lane " + i + " as " + laneDescriptors.get(i).index());
            }
            lanes[i] = new LaneRuntime(laneDescriptors.get(i), config.queueDepth());
        }
        int nThreads = Math.max(1, Math.min(config.progressThreads(), lanes.length));
        this.threads = new ProgressThread[nThreads];
        for (int t = 0; t < nThreads; t++) {
            List<LaneRuntime> mine = new ArrayList<>();
            for (int i = t; i < lanes.length; i += nThreads) {
                mine.add(lanes[i]);
            }
            threads[t] = new ProgressThread(this, backend, mine.toArray(new LaneRuntime[0]),
                    config.busySpin() ? IdleStrategy.busySpin() : IdleStrategy.backoff(), config.chunkBytes(), "rdma4j-progress-" + name + "-" + t);
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon(true).name("rdma4j-timer-" + name).unstarted(r));
        boolean embedded = config.directory() == null;
        // a generous call deadline: the first call over TCP pays for channel set-up on a loaded machine, and the first call
        // to the embedded directory for loading gRPC (over 5 s in an emulated guest on a busy host)
        this.rendezvous = Rendezvous.connect(embedded ? Rendezvous.embeddedTarget() : config.directory(), config.security(), Duration.ofSeconds(15));
        HandshakeServer.Builder hs = HandshakeServer.builder(name, generation, new Handler()).security(config.security());
        if (embedded || config.directory().startsWith("inproc:")) {
            hs.inProcess("rdma4j-handshake-" + name + "-" + generation);
        }
        this.handshakeServer = hs.start();
    }

    /** Opens an engine: backend, lanes, progress threads, handshake service, announcement and membership watch. */
    public static EngineCore open(EngineConfig c) {
        validate(c);
        String name = c.name() != null ? c.name() : "engine-" + ProcessHandle.current().pid() + "-" + INSTANCES.incrementAndGet();
        EngineBackend raw = openBackend(c);
        EngineBackend backend;
        try {
            backend = c.backendWrapper().apply(raw);
        } catch (RuntimeException e) {
            raw.close();
            throw e;
        }
        EngineCore e;
        try {
            e = new EngineCore(c, name, backend);
        } catch (RuntimeException ex) {
            backend.close();
            throw ex;
        }
        try {
            e.start();
        } catch (RuntimeException ex) {
            e.close();
            throw ex;
        }
        return e;
    }

    private static void validate(EngineConfig c) {
        if (c.name() != null && !NAME.matcher(c.name()).matches()) {
            throw new IllegalArgumentException("engine name '" + c.name() + "' must match " + NAME_RULE);
        }
        if (c.chunkBytes() < 4096 || c.chunkBytes() > (1L << 30)) {
            throw new IllegalArgumentException("chunk size must be 4 KiB..1 GiB, got " + c.chunkBytes());
        }
        if (c.smallThreshold() < 0) {
            throw new IllegalArgumentException("small-transfer threshold must be >= 0, got " + c.smallThreshold());
        }
        if (c.queueDepth() < 2 || c.queueDepth() > 4096) {
            throw new IllegalArgumentException("queue depth must be 2..4096, got " + c.queueDepth());
        }
        if (c.progressThreads() < 1 || c.progressThreads() > 64) {
            throw new IllegalArgumentException("progress threads must be 1..64, got " + c.progressThreads());
        }
        if (c.lanesPerNic() < 1 || c.lanesPerNic() > 16) {
            throw new IllegalArgumentException("lanes per NIC must be 1..16, got " + c.lanesPerNic());
        }
        if (c.maxRetries() < 0 || c.maxRetries() > 100) {
            throw new IllegalArgumentException("max retries must be 0..100, got " + c.maxRetries());
        }
        for (var w : c.laneWeights().entrySet()) {
            if (!(w.getValue() > 0)) {
                throw new IllegalArgumentException("lane " + w.getKey() + " weight must be > 0, got " + w.getValue());
            }
        }
    }

    private static EngineBackend openBackend(EngineConfig c) {
        List<EngineBackendProvider> all = new ArrayList<>();
        ServiceLoader.load(EngineBackendProvider.class, EngineCore.class.getClassLoader()).forEach(all::add);
        all.sort(Comparator.comparingInt(EngineBackendProvider::priority).reversed());
        StringBuilder why = new StringBuilder();
        for (EngineBackendProvider p : all) {
            if (!c.backend().equals("auto") && !c.backend().equalsIgnoreCase(p.name())) {
                continue;
            }
            if (!p.isAvailable()) {
                why.append("; ").append(p.name()).append(": ").append(p.unavailabilityCause());
                continue;
            }
            Map<String, String> options = new HashMap<>();
            if (c.nicFilter() != null) {
                options.put("nicFilter", c.nicFilter());
            }
            try {
                return p.open(new BackendConfig(c.provider(), c.lanesPerNic(), c.queueDepth(), options));
            } catch (BackendUnavailableException e) {
                if (!c.backend().equals("auto")) {
                    throw e;
                }
                why.append("; ").append(p.name()).append(": ").append(e.getMessage());
            }
        }
        if (all.isEmpty()) {
            throw new BackendUnavailableException("no engine backend on the class path: add rdma4j-libfabric (or rdma4j-ibverbs) as a dependency", null);
        }
        String none = "no usable engine backend for '" + c.backend() + "'";
        if (why.isEmpty()) {
            throw new BackendUnavailableException(none + " (known: " + all.stream().map(EngineBackendProvider::name).toList()
                    + "): pass one of them, or \"auto\", to TransferEngine.Builder.backend()", null);
        }
        throw new BackendUnavailableException(none + why + ". Each reason is the backend's"
                + " EngineBackendProvider.unavailabilityCause() or what its open() threw; Libfabric.unavailabilityCause()"
                + " and Verbs.unavailabilityCause() probe the native libraries alone", null);
    }

    private Announcement announcementField;

    private void start() {
        for (ProgressThread t : threads) {
            t.start();
        }
        List<LaneInfo> announced = new ArrayList<>();
        for (LaneDescriptor d : laneDescriptors) {
            int conn = backend.prepareConnection(d.index());
            announced.add(laneInfo(d, backend.endpointInfo(d.index(), conn)));
        }
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "localhost";
        }
        announcementField = rendezvous.announce(new PeerInfo(name, handshakeServer.address(), host, generation, announced), config.lease());
        startWatch();
    }

    private void startWatch() {
        if (closed) {
            return;
        }
        watch = rendezvous.watch(this::onPeerEvent, err -> {
            if (!closed) {
                timer.schedule(this::startWatch, 1, TimeUnit.SECONDS);
            }
        });
    }

    private LaneInfo laneInfo(LaneDescriptor d, byte[] endpoint) {
        return new LaneInfo(d.index(), wireBackend, wireBackend == Backend.LIBFABRIC ? backend.provider() : "", d.device(), d.pciAddress(),
                d.numaNode(), endpoint);
    }

    // ------------------------------------------------------------------ API

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return name + ": " + backend.description() + ", " + lanes.length + " lane(s), " + threads.length + " progress thread(s); "
                + levels.source();
    }

    private void ensureOpen() {
        if (closed) {
            throw new ClosedException("transfer engine " + name);
        }
    }

    @Override
    public LocalBuffer register(MemorySegment segment) {
        return register(segment, MemoryLocation.HOST);
    }

    @Override
    public LocalBuffer register(MemorySegment segment, MemoryLocation location) {
        ensureOpen();
        Segments.requireNative(segment, "segment to register");
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment: allocate at least one byte");
        }
        if (location == null) {
            throw new IllegalArgumentException("location is null: pass MemoryLocation.HOST when unknown");
        }
        RegistrationCache.Lease lease = registrations.acquire(segment);
        return new BufferImpls.Local(this, segment, location, lease.entry(), lease.reused());
    }

    @Override
    public LocalBuffer register(DeviceMemory memory) {
        ensureOpen();
        return DeviceBuffers.register(this, backend, registrations, memory);
    }

    @Override
    public void publish(String bufferName, LocalBuffer buffer, Access access) {
        ensureOpen();
        BufferImpls.Local local = local(buffer, "buffer to publish");
        if (bufferName == null || !NAME.matcher(bufferName).matches()) {
            throw new IllegalArgumentException("buffer name '" + bufferName + "' must match " + NAME_RULE);
        }
        if (access == null) {
            throw new IllegalArgumentException("access is null: pass Access.anyPeer()");
        }
        DeviceBuffers.beforePublish(local);
        long gen = nextBufferGeneration.getAndIncrement();
        registrations.retain(local.entry);
        Published p = new Published(bufferName, local, gen, access);
        Published old = published.put(bufferName, p);
        publishedByGeneration.put(gen, p);
        if (old != null) {
            publishedByGeneration.remove(old.generation());
            registrations.release(old.buffer().entry);
        }
        announcementField.publish(bufferInfo(p, wireName(name, bufferName)).withAccess(Set.copyOf(access.peers())));
    }

    private BufferInfo bufferInfo(Published p, String wire) {
        var reg = p.buffer().entry.registration();
        long delta = p.buffer().segment.address() - reg.address();
        List<LaneKey> keys = new ArrayList<>();
        for (LaneDescriptor d : laneDescriptors) {
            keys.add(new LaneKey(d.index(), reg.remoteAddress(d.index()) + delta, reg.remoteKey(d.index())));
        }
        MemoryLocation loc = p.buffer().location;
        Locality locality = loc.gpuAddress() != null ? new Locality(loc.numaNode(), -1, loc.gpuAddress()) : Locality.host(loc.numaNode());
        MemoryKind kind = p.buffer().device != null ? MemoryKind.CUDA : MemoryKind.HOST;
        return new BufferInfo(wire, "", p.buffer().length(), kind, locality, p.generation(), keys, Set.copyOf(p.access().peers()));
    }

    static String wireName(String owner, String buffer) {
        return owner + "/" + buffer;
    }

    @Override
    public void unpublish(String bufferName) {
        ensureOpen();
        Published p = published.remove(bufferName);
        if (p == null) {
            throw new UnknownBufferException("no buffer '" + bufferName + "' is published by " + name + " (published: " + published.keySet() + ")");
        }
        publishedByGeneration.remove(p.generation());
        try {
            announcementField.unpublish(wireName(name, bufferName));
        } finally {
            registrations.release(p.buffer().entry);
        }
    }

    @Override
    public Peer peer(String peerName) {
        ensureOpen();
        if (peerName == null || peerName.isEmpty()) {
            throw new IllegalArgumentException("peer name is empty");
        }
        PeerInfo info;
        try {
            info = rendezvous.resolve(peerName).orElseThrow(() -> new UnknownPeerException("no peer '" + peerName
                    + "' is announced in the directory " + rendezvous.target() + ": start it first, or check the name"));
        } catch (RendezvousException e) {
            throw new UnknownPeerException("cannot resolve peer '" + peerName + "': " + e.getMessage(), e);
        }
        boolean compatible = info.lanes().stream().anyMatch(this::compatible);
        if (!compatible) {
            throw new UnknownPeerException("peer '" + peerName + "' has no " + backend.name() + " lane compatible with ours ("
                    + backend.provider() + "); its lanes: " + info.lanes());
        }
        PeerLink link = peers.compute(peerName, (k, old) -> {
            if (old != null && old.generation == info.generation() && !old.lost()) {
                return old;
            }
            if (old != null) {
                lose(old, "it restarted (generation " + old.generation + " -> " + info.generation() + ")");
            }
            return new PeerLink(info, lanes.length);
        });
        return new BufferImpls.PeerImpl(this, link);
    }

    private boolean compatible(LaneInfo l) {
        return l.backend() == wireBackend && (wireBackend != Backend.LIBFABRIC || l.provider().equals(backend.provider()));
    }

    RemoteBuffer lookup(BufferImpls.PeerImpl peer, String bufferName) {
        ensureOpen();
        if (bufferName == null || !NAME.matcher(bufferName).matches()) {
            throw new IllegalArgumentException("buffer name '" + bufferName + "' must match " + NAME_RULE);
        }
        Optional<BufferInfo> info;
        try {
            info = announcementField.lookup(wireName(peer.name(), bufferName));
        } catch (RendezvousException e) {
            throw new UnknownBufferException("peer '" + peer.name() + "' buffer '" + bufferName + "': " + e.getMessage(), e);
        }
        BufferInfo b = info.orElseThrow(() -> new UnknownBufferException("peer '" + peer.name() + "' has published no buffer '" + bufferName
                + "': publish it there first with engine.publish(\"" + bufferName + "\", buffer, access)"));
        if (!b.owner().isEmpty() && !b.owner().equals(peer.name())) {
            throw new UnknownBufferException("buffer '" + bufferName + "' belongs to '" + b.owner() + "', not to '" + peer.name() + "'");
        }
        return new BufferImpls.Remote(peer, bufferName, b);
    }

    // ------------------------------------------------------------------ transfers

    @Override
    public Transfer write(LocalBuffer source, long sourceOffset, RemoteBuffer target, long targetOffset, long length, TransferOptions options) {
        Prepared p = prepare(Op.WRITE, source, sourceOffset, target, targetOffset, length, options);
        beforeDevice(List.of(p));
        return afterDevice(p, launch(p));
    }

    @Override
    public Transfer read(LocalBuffer target, long targetOffset, RemoteBuffer source, long sourceOffset, long length, TransferOptions options) {
        if (options != null && options.notifies()) {
            throw new IllegalArgumentException("a read cannot carry a notification tag: the peer's memory is only read; write to it to notify");
        }
        Prepared p = prepare(Op.READ, target, targetOffset, source, sourceOffset, length, options);
        beforeDevice(List.of(p));
        return afterDevice(p, launch(p));
    }

    @Override
    public TransferBatch writeAll(List<TransferRequest> requests) {
        if (requests == null) {
            throw new IllegalArgumentException("requests is null");
        }
        List<Prepared> prepared = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            TransferRequest r = requests.get(i);
            try {
                prepared.add(prepare(Op.WRITE, r.source(), r.sourceOffset(), r.target(), r.targetOffset(), r.length(), r.options()));
            } catch (RuntimeException e) {
                for (Prepared p : prepared) {
                    registrations.release(p.local.entry);
                }
                if (e instanceof IllegalArgumentException || e instanceof IndexOutOfBoundsException) {
                    throw new IllegalArgumentException("request " + i + " of the batch: " + e.getMessage() + " (nothing was posted)", e);
                }
                throw e;
            }
        }
        beforeDevice(prepared);
        List<Transfer> out = new ArrayList<>(prepared.size());
        for (Prepared p : prepared) {
            out.add(afterDevice(p, launch(p)));
        }
        return TransferBatch.of(out);
    }

    /**
     * Device memory's side of launching (see {@link DeviceBuffers}): writes from it wait for its producer and fill their
     * staging range before anything of the batch is posted; reads into it hold one more reference for the copy back.
     */
    private void beforeDevice(List<Prepared> batch) {
        int done = 0;
        try {
            for (Prepared p : batch) {
                if (p.local.device != null) {
                    if (p.op == Op.WRITE) {
                        DeviceBuffers.beforeWrite(p.local, p.localOffset, p.length);
                    } else {
                        registrations.retain(p.local.entry);
                    }
                }
                done++;
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < batch.size(); i++) {
                Prepared p = batch.get(i);
                registrations.release(p.local.entry);
                if (i < done && p.local.device != null && p.op == Op.READ) {
                    registrations.release(p.local.entry);
                }
            }
            throw e;
        }
    }

    private Transfer afterDevice(Prepared p, Transfer t) {
        return p.local.device != null && p.op == Op.READ ? DeviceBuffers.afterRead(p.local, p.localOffset, p.length, t, registrations) : t;
    }

    private record Prepared(byte op, BufferImpls.Local local, long localOffset, BufferImpls.Remote remote, long remoteOffset, long length,
                            TransferOptions options, PeerLink link, List<Planner.Candidate> all, Planner.Assignment assignment) {
    }

    private BufferImpls.Local local(LocalBuffer b, String what) {
        if (b == null) {
            throw new IllegalArgumentException(what + " is null");
        }
        if (!(b instanceof BufferImpls.Local l) || l.engine != this) {
            throw new IllegalArgumentException(what + " was not registered with this engine (" + name + "): register it with engine.register(segment)");
        }
        if (l.isClosed()) {
            throw new IllegalStateException(what + " was closed: register the memory again");
        }
        Segments.requireAlive(l.segment, what);
        return l;
    }

    private BufferImpls.Remote remote(RemoteBuffer b, String what) {
        if (b == null) {
            throw new IllegalArgumentException(what + " is null");
        }
        if (!(b instanceof BufferImpls.Remote r) || r.peer.engine != this) {
            throw new IllegalArgumentException(what + " was not resolved by this engine: use engine.peer(name).buffer(name)");
        }
        return r;
    }

    /** Every check happens here, before anything is posted. Holds a registration reference on success. */
    private Prepared prepare(byte op, LocalBuffer localBuffer, long localOffset, RemoteBuffer remoteBuffer, long remoteOffset, long length,
                             TransferOptions options) {
        ensureOpen();
        TransferOptions o = options == null ? TransferOptions.DEFAULT : options;
        String dir = op == Op.READ ? "read" : "write";
        BufferImpls.Local l = local(localBuffer, op == Op.READ ? "read target" : "write source");
        BufferImpls.Remote r = remote(remoteBuffer, op == Op.READ ? "read source" : "write target");
        if (length < 0) {
            throw new IllegalArgumentException(dir + " length must be >= 0, got " + length);
        }
        Segments.checkRange(l.segment, localOffset, length, (op == Op.READ ? "read target " : "write source ") + l);
        Segments.checkRange(r.length(), remoteOffset, length, (op == Op.READ ? "read source " : "write target ") + r);
        PeerLink link = r.peer.link;
        if (link.lost()) {
            throw new PeerLostException("peer '" + link.name + "' is gone: " + link.lostReason);
        }
        if (r.generation() <= 0 && r.info.lanes().isEmpty()) {
            throw new IllegalArgumentException(r + " has no lane keys");
        }
        ensureConnected(link);
        List<Planner.Candidate> all = candidates(link, r, l.location, false);
        if (all.isEmpty()) {
            throw new TransferException("no usable lane to '" + link.name + "' for " + r + ": " + laneHealth());
        }
        List<Planner.Candidate> best = Planner.best(all);
        Planner.Assignment a = planner.assign(best, length, rotation.getAndIncrement());
        DeviceBuffers.check(l, op, o);
        registrations.retain(l.entry);
        return new Prepared(op, l, localOffset, r, remoteOffset, length, o, link, all, a);
    }

    private String laneHealth() {
        StringBuilder sb = new StringBuilder();
        for (LaneRuntime l : lanes) {
            sb.append(l.describe()).append(l.failed ? " out of service: " + l.lastError : l.lastError != null ? " last error: " + l.lastError : " healthy")
                    .append("; ");
        }
        return sb.toString();
    }

    private List<Planner.Candidate> candidates(PeerLink link, BufferImpls.Remote r, MemoryLocation localMem, boolean includeFailed) {
        List<Planner.Candidate> out = new ArrayList<>();
        long now = System.nanoTime();
        for (int i = 0; i < lanes.length; i++) {
            int rl = link.remoteLane[i];
            if (link.connection[i] < 0 || !r.hasLane(rl) || (!includeFailed && lanes[i].failed)) {
                continue;
            }
            LaneDescriptor d = laneDescriptors.get(i);
            LaneInfo remote = link.remote(rl);
            Level ll = levels.level(d.pciAddress(), d.numaNode(), localMem);
            Level rlv = LaneLevels.byNuma(remote == null ? -1 : remote.numaNode(), r.location.numaNode());
            double w = config.laneWeights().getOrDefault(i, d.bandwidthGbps());
            // a lane cooling down ranks one level worse so healthy lanes carry new work first
            if (lanes[i].paused(now) && ll != Level.SYS) {
                ll = Level.values()[ll.ordinal() + 1];
            }
            out.add(new Planner.Candidate(i, nic(d), ll, rl, remote == null ? "lane " + rl : remoteNic(remote), rlv, w));
        }
        out.sort(Comparator.comparing((Planner.Candidate c) -> Level.worse(c.localLevel(), c.remoteLevel())));
        return out;
    }

    static String nic(LaneDescriptor d) {
        return d.pciAddress() != null ? d.pciAddress() : d.device() + "#" + d.index();
    }

    static String remoteNic(LaneInfo l) {
        return l.pciAddress() != null && !l.pciAddress().isEmpty() ? l.pciAddress() : l.device() + "#" + l.index();
    }

    private Transfer launch(Prepared p) {
        long localAddress = p.local.segment.address() + p.localOffset;
        long[] ra = new long[p.remote.address.length];
        for (int i = 0; i < ra.length; i++) {
            ra[i] = p.remote.address[i] + p.remoteOffset;
        }
        int crc = 0;
        if (p.options.crc32c()) {
            CRC32C c = new CRC32C();
            c.update(p.local.segment.asSlice(p.localOffset, p.length).asByteBuffer());
            crc = (int) c.getValue();
        }
        TransferImpl t = new TransferImpl(this, p.link, p.op, p.length, p.local.entry.registration().handle(), localAddress, ra, p.remote.key,
                p.all.toArray(new Planner.Candidate[0]), p.options.notifies(), p.options.tag(), p.options.crc32c(), crc, p.remote.generation(),
                p.remoteOffset, p.remote.shortName, p.local.entry);
        active.add(t);
        p.link.active.add(t);
        if (closed) {
            t.fail(new TransferException("engine " + name + " closed"));
            return t;
        }
        if (p.link.lost()) {
            t.fail(new PeerLostException("peer '" + p.link.name + "' is gone: " + p.link.lostReason));
            return t;
        }
        if (p.options.deadline() != null) {
            Duration d = p.options.deadline();
            String what = (p.op == Op.READ ? "read" : "write") + " of " + p.length + " bytes with " + p.link.name;
            t.deadlineTask = timer.schedule(() -> t.fail(new TransferTimeoutException(what + " missed its "
                    + d.toMillis() + " ms deadline with " + t.bytesCompleted() + " bytes done"
                    + (t.awaitingVerdict ? ", waiting for the target's CRC32C verdict" : ""))),
                    d.toNanos(), TimeUnit.NANOSECONDS);
        }
        Planner.Assignment a = p.assignment;
        if (p.length == 0) {
            Planner.Candidate c = a.pairs()[0];
            if (t.notify) {
                t.state.set(TransferImpl.NOTIFYING);
                LaneRuntime l = lanes[c.localLane()];
                l.owner.submit((Runnable) () -> dataDone(t, l, c.remoteLane(), p.link.connection[c.localLane()]));
            } else {
                t.complete();
            }
            return t;
        }
        for (int i = 0; i < a.size(); i++) {
            Planner.Candidate c = a.pairs()[i];
            lanes[c.localLane()].owner.submit(new Stripe(t, c.localLane(), c.remoteLane(), p.link.connection[c.localLane()], a.start()[i],
                    a.length()[i], 0));
        }
        return t;
    }

    @Override
    public Plan explain(LocalBuffer source, long sourceOffset, RemoteBuffer target, long targetOffset, long length) {
        ensureOpen();
        BufferImpls.Local l = local(source, "explain source");
        BufferImpls.Remote r = remote(target, "explain target");
        Segments.checkRange(l.segment, sourceOffset, length, "explain source " + l);
        Segments.checkRange(r.length(), targetOffset, length, "explain target " + r);
        ensureConnected(r.peer.link);
        List<Planner.Candidate> all = candidates(r.peer.link, r, l.location, false);
        if (all.isEmpty()) {
            return new Plan(List.of(), length, "no usable lane to '" + r.peer.name() + "': " + laneHealth());
        }
        List<Planner.Candidate> best = Planner.best(all);
        Planner.Assignment a = planner.assign(best, length, rotation.get());
        return planner.toPlan(a, length, levels.source() + "; " + planner.describe(all, best, length, a.size()));
    }

    // ------------------------------------------------------------------ volumes (remote block storage)

    @Override
    public StorageVolume openVolume(VolumeSpec spec) {
        ensureOpen();
        return volumes.open(spec);
    }

    @Override
    public Transfer write(LocalBuffer source, long sourceOffset, VolumeExtent target, long targetOffset, long length, TransferOptions options) {
        ensureOpen();
        return volumes.launch(true, local(source, "write source"), sourceOffset, target, targetOffset, length, options);
    }

    @Override
    public Transfer read(LocalBuffer target, long targetOffset, VolumeExtent source, long sourceOffset, long length, TransferOptions options) {
        ensureOpen();
        return volumes.launch(false, local(target, "read target"), targetOffset, source, sourceOffset, length, options);
    }

    @Override
    public Plan explain(LocalBuffer source, long sourceOffset, VolumeExtent target, long targetOffset, long length) {
        ensureOpen();
        return volumes.explain(local(source, "explain source"), sourceOffset, target, targetOffset, length);
    }

    // ------------------------------------------------------------------ connections

    private void ensureConnected(PeerLink link) {
        if (link.connected) {
            return;
        }
        synchronized (link) {
            if (link.connected) {
                return;
            }
            if (link.lost()) {
                throw new PeerLostException("peer '" + link.name + "' is gone: " + link.lostReason);
            }
            List<LaneInfo> offer = new ArrayList<>();
            int[] conns = new int[lanes.length];
            java.util.Arrays.fill(conns, -1);
            for (int i = 0; i < lanes.length; i++) {
                if (lanes[i].failed) {
                    continue;
                }
                conns[i] = backend.prepareConnection(i);
                offer.add(laneInfo(laneDescriptors.get(i), backend.endpointInfo(i, conns[i])));
            }
            HandshakeResult result;
            try {
                HandshakeClient client = handshakeClients.computeIfAbsent(link.info.handshakeAddress(),
                        a -> HandshakeClient.connect(a, config.security(), Duration.ofSeconds(15)));
                result = client.connect(name, generation, link.name, offer);
                if (result.responderGeneration() != link.generation) {
                    throw new PeerLostException("peer '" + link.name + "' restarted (generation " + link.generation + " -> "
                            + result.responderGeneration() + "): resolve it again with engine.peer(\"" + link.name + "\")");
                }
                for (LanePairing pr : result.lanes()) {
                    int l = pr.initiatorLane();
                    if (l < 0 || l >= lanes.length || conns[l] < 0 || link.connection[l] >= 0) {
                        continue;
                    }
                    backend.connect(l, conns[l], pr.responderLane().endpoint());
                    link.connection[l] = conns[l];
                    link.remoteLane[l] = pr.responderLane().index();
                    conns[l] = -1;
                }
                BufferInfo inbox = client.describe(result, inboxName(name)).orElseThrow(() -> new TransferException("peer '" + link.name
                        + "' offered no notification inbox after the handshake"));
                int maxLane = 0;
                for (LaneKey k : inbox.lanes()) {
                    maxLane = Math.max(maxLane, k.lane() + 1);
                }
                long[] base = new long[maxLane];
                long[] key = new long[maxLane];
                for (LaneKey k : inbox.lanes()) {
                    base[k.lane()] = k.address();
                    key[k.lane()] = k.key();
                }
                int slots = NotificationRecord.slotsOf(inbox.length());
                if (inbox.generation() <= 0 || inbox.generation() >= (1 << 16) || slots < 1) {
                    throw new TransferException("peer '" + link.name + "' described a malformed inbox: " + inbox);
                }
                link.channel = new OutChannel(backend, slots, (int) inbox.generation(), base, key);
                link.session = result;
            } catch (RendezvousException e) {
                throw new PeerLostException("handshake with peer '" + link.name + "' at " + link.info.handshakeAddress() + " failed: " + e.getMessage(), e);
            } finally {
                for (int i = 0; i < conns.length; i++) {
                    if (conns[i] >= 0) {
                        backend.disconnect(i, conns[i]);
                    }
                }
            }
            boolean any = false;
            for (int c : link.connection) {
                any |= c >= 0;
            }
            if (!any) {
                throw new TransferException("peer '" + link.name + "' paired none of our lanes");
            }
            link.connected = true;
        }
    }

    static String inboxName(String initiator) {
        String n = "inbox/" + initiator;
        return n.length() <= 128 ? n : "inbox/" + HexFormat.of().formatHex(java.nio.ByteBuffer.allocate(8).putLong(initiator.hashCode()).array());
    }

    /** Server side of the handshake: pairs an initiator's lanes rail to rail with ours and gives it an inbox. */
    private final class Handler implements HandshakeHandler {
        @Override
        public List<LanePairing> connect(String initiator, long initiatorGeneration, List<LaneInfo> remoteLanes) {
            if (closed) {
                throw new IllegalStateException("engine " + name + " is closing");
            }
            Inbound old = inbound.remove(initiator);
            if (old != null) {
                dropInbound(old);
            }
            List<LaneInfo> usable = remoteLanes.stream().filter(EngineCore.this::compatible).toList();
            List<Integer> healthy = new ArrayList<>();
            for (LaneRuntime l : lanes) {
                if (!l.failed) {
                    healthy.add(l.lane);
                }
            }
            if (healthy.isEmpty()) {
                throw new IllegalStateException("engine " + name + " has no healthy lane");
            }
            List<LanePairing> out = new ArrayList<>();
            int[] myLanes = new int[usable.size()];
            int[] myConns = new int[usable.size()];
            try {
                for (int k = 0; k < usable.size(); k++) {
                    LaneInfo ri = usable.get(k);
                    int local = healthy.get(k % healthy.size());
                    int conn = backend.prepareConnection(local);
                    myLanes[k] = local;
                    myConns[k] = conn;
                    backend.connect(local, conn, ri.endpoint());
                    out.add(new LanePairing(ri.index(), laneInfo(laneDescriptors.get(local), backend.endpointInfo(local, conn))));
                }
            } catch (RuntimeException e) {
                for (int k = 0; k < out.size(); k++) {
                    backend.disconnect(myLanes[k], myConns[k]);
                }
                throw e;
            }
            int id = allocateInbox();
            InChannel ch = new InChannel(backend, initiator, initiatorGeneration, id, inboxSlots);
            inboxes.set(id, ch);
            inbound.put(initiator, new Inbound(initiator, initiatorGeneration, myLanes, myConns, ch, inboxName(initiator)));
            return out;
        }

        @Override
        public Optional<BufferInfo> describe(String bufferName) {
            for (Inbound in : inbound.values()) {
                if (in.inboxName().equals(bufferName)) {
                    List<LaneKey> keys = new ArrayList<>();
                    for (LaneDescriptor d : laneDescriptors) {
                        keys.add(new LaneKey(d.index(), in.inbox().registration.remoteAddress(d.index()), in.inbox().registration.remoteKey(d.index())));
                    }
                    return Optional.of(new BufferInfo(bufferName, name, in.inbox().length(), MemoryKind.HOST, Locality.UNKNOWN, in.inbox().id, keys,
                            Set.of(in.initiator())));
                }
            }
            String shortName = bufferName.startsWith(name + "/") ? bufferName.substring(name.length() + 1) : bufferName;
            Published p = published.get(shortName);
            return p == null ? Optional.empty() : Optional.of(bufferInfo(p, bufferName));
        }

        @Override
        public void peerRestarted(String initiator, long previousGeneration, long newGeneration) {
            Inbound old = inbound.remove(initiator);
            if (old != null) {
                dropInbound(old);
            }
        }
    }

    private int allocateInbox() {
        for (int tries = 0; tries < (1 << 16); tries++) {
            int id = nextInbox.getAndIncrement() & 0xFFFF;
            if (id != 0 && inboxes.get(id) == null) {
                return id;
            }
        }
        throw new IllegalStateException("engine " + name + " has 65535 initiators connected: no inbox left");
    }

    private void dropInbound(Inbound in) {
        inboxes.compareAndSet(in.inbox().id, in.inbox(), null);
        for (int k = 0; k < in.lanes().length; k++) {
            try {
                backend.disconnect(in.lanes()[k], in.connections()[k]);
            } catch (RuntimeException ignored) {
                // the peer is gone anyway
            }
        }
        // the inbox memory stays registered until close: a late write from the old generation must land somewhere valid
        retiredInboxes.add(in.inbox());
    }

    private final List<InChannel> retiredInboxes = java.util.Collections.synchronizedList(new ArrayList<>());

    // ------------------------------------------------------------------ membership

    private void onPeerEvent(PeerEvent e) {
        if (e.peer() == null || e.peer().name().equals(name)) {
            return;
        }
        String who = e.peer().name();
        switch (e.kind()) {
            case LEFT -> {
                String why = e.reason() == PeerEvent.Reason.EXPIRED ? "its lease expired" : "it withdrew from the directory";
                PeerLink link = peers.remove(who);
                if (link != null) {
                    lose(link, why);
                }
                Inbound in = inbound.remove(who);
                if (in != null) {
                    dropInbound(in);
                }
                // so that the same peer generation coming back gets a fresh connection and inbox, not a stored answer
                handshakeServer.forget(who);
            }
            case UPDATED, JOINED -> {
                PeerLink link = peers.get(who);
                if (link != null && link.generation != e.peer().generation()) {
                    peers.remove(who, link);
                    lose(link, "it restarted (generation " + link.generation + " -> " + e.peer().generation() + ")");
                }
            }
            default -> {
            }
        }
    }

    private void lose(PeerLink link, String why) {
        synchronized (link) {
            if (link.lostReason != null) {
                return;
            }
            link.lostReason = why;
        }
        for (Iterator<TransferImpl> it = link.active.iterator(); it.hasNext(); ) {
            TransferImpl t = it.next();
            t.fail(new PeerLostException("transfer of " + t.total + " bytes with '" + link.name + "' failed: the peer is gone (" + why + ") after "
                    + t.bytesCompleted() + " bytes"));
        }
    }

    // ------------------------------------------------------------------ data-path callbacks (progress threads)

    void finished(TransferImpl t) {
        active.remove(t);
        t.peer.active.remove(t);
    }

    void release(RegistrationCache.Entry e) {
        registrations.release(e);
    }

    void progressError(Throwable t) {
        progressErrors.incrementAndGet();
        lastProgressError = t;
    }

    /** @return whether some peer is connected to us (and may be writing or reading our memory) */
    boolean hasInbound() {
        return !inbound.isEmpty();
    }

    void laneFailed(LaneRuntime l, String error) {
        l.fail(error, cooldownNanos, maxCooldownNanos, backend);
    }

    void dataDone(TransferImpl t, LaneRuntime l, int remoteLane, int connection) {
        if (!t.notify) {
            t.complete();
            return;
        }
        t.peer.channel.notify(this, t, l, remoteLane, connection);
    }

    /**
     * Every notification copy of {@code t} completed (on lane {@code l}'s thread): a write without a CRC is done, one
     * with a CRC reads the target's verdict first.
     */
    void notified(TransferImpl t, LaneRuntime l) {
        if (!t.crc) {
            t.complete();
            return;
        }
        t.awaitingVerdict = true;
        pollVerdict(t, l);
    }

    /** Posts a read of {@code t}'s verdict word on {@code l} (on its thread), unless {@code t} ended meanwhile. */
    private void pollVerdict(TransferImpl t, LaneRuntime l) {
        OutChannel ch = t.peer.channel;
        if (t.peer.lost()) {
            t.fail(new PeerLostException("write of " + t.total + " bytes with '" + t.peer.name
                    + "' failed: the peer is gone (" + t.peer.lostReason + ") before its CRC32C verdict was read"));
        }
        if (t.isTerminal()) {
            ch.verdictDone(this, t, l);
            return;
        }
        int rc = ch.postVerdictRead(t, l);
        if (rc == EngineBackend.BACK_PRESSURED) {
            pollVerdictLater(t, l);
        } else if (rc != EngineBackend.OK) {
            String err = backend.laneError(l.lane);
            err = l.describe() + ": CRC32C verdict read post failed: " + (err == null ? "status " + rc : err);
            laneFailed(l, err);
            verdictReadFailed(t, l, err);
        }
    }

    /** A read of {@code t}'s verdict word completed on {@code l} ({@code err} when it failed). */
    void verdictRead(TransferImpl t, LaneRuntime l, boolean ok, String err) {
        OutChannel ch = t.peer.channel;
        if (t.isTerminal()) {
            ch.verdictDone(this, t, l);
            return;
        }
        if (!ok) {
            verdictReadFailed(t, l, err);
            return;
        }
        long word = ch.verdictWord(t);
        int code = NotificationRecord.verdictCode(word);
        // the peer's word is untrusted: only a word written for our sequence with a verdict decides; the previous
        // write's word in the slot (or anything else) means the check is not done yet
        if (!NotificationRecord.verdictFor(word, t.notifySeq) || code == NotificationRecord.VERDICT_NONE) {
            pollVerdictLater(t, l);
            return;
        }
        ch.verdictDone(this, t, l);
        if (code == NotificationRecord.VERDICT_VERIFIED) {
            t.complete();
        } else {
            long landed = code == NotificationRecord.VERDICT_MISMATCH
                    ? Integer.toUnsignedLong(NotificationRecord.verdictCrc(word)) : -1;
            t.fail(new ChecksumMismatchException(t.peer.name, t.tag, t.targetName, t.targetOffset, t.total,
                    Integer.toUnsignedLong(t.crcValue), landed));
        }
    }

    private void verdictReadFailed(TransferImpl t, LaneRuntime l, String err) {
        t.recordError(err);
        t.retries.incrementAndGet();
        Planner.Candidate c = ++t.verdictFailures > config.maxRetries() ? null : pickLane(t, l.lane, t.verdictFailures);
        if (c == null) {
            t.fail(t.laneFailure("reading the CRC32C verdict of notification " + t.tag + " after a " + t.total
                    + "-byte write"));
            t.peer.channel.verdictDone(this, t, l);
            return;
        }
        pollVerdictLater(t, lanes[c.localLane()]);
    }

    /**
     * Reads the verdict again after a pause: the target checks a large range on a virtual thread, so the verdict may
     * take milliseconds; the pause doubles from 10 us up to {@link #VERDICT_POLL_MAX_NANOS}.
     */
    private void pollVerdictLater(TransferImpl t, LaneRuntime l) {
        long pause = Math.min(VERDICT_POLL_MAX_NANOS, 10_000L << Math.min(t.verdictPolls++, 8));
        try {
            timer.schedule(() -> l.owner.submit((Runnable) () -> pollVerdict(t, l)), pause, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing: close() fails every transfer in flight
            t.peer.channel.verdictDone(this, t, l);
        }
    }

    void dispatchCopy(NotifyCopy c) {
        lanes[c.lane].owner.submit(c);
    }

    /** Re-routes [offset, offset+length) of {@code t} after a failure on {@code failed}. */
    void retry(TransferImpl t, long offset, long length, int attempt, LaneRuntime failed, String error) {
        if (t.isTerminal()) {
            return;
        }
        if (t.peer.lost()) {
            t.fail(new PeerLostException("transfer with '" + t.peer.name + "' failed: the peer is gone (" + t.peer.lostReason + ")"));
            return;
        }
        if (attempt > config.maxRetries()) {
            t.fail(t.laneFailure((t.op == Op.READ ? "read" : "write") + " of " + t.total + " bytes (a chunk failed " + attempt + " times)"));
            return;
        }
        Planner.Candidate c = pickLane(t, failed.lane, attempt);
        if (c == null) {
            t.fail(t.laneFailure((t.op == Op.READ ? "read" : "write") + " of " + t.total + " bytes"));
            return;
        }
        t.retries.incrementAndGet();
        lanes[c.localLane()].owner.submit(new Stripe(t, c.localLane(), c.remoteLane(), t.peer.connection[c.localLane()], offset, length, attempt));
    }

    /** A healthy lane other than {@code avoid}; else one cooling down (it waits); null when every lane is out of service. */
    private Planner.Candidate pickLane(TransferImpl t, int avoid, int attempt) {
        long now = System.nanoTime();
        int n = t.pairs.length;
        for (int k = 0; k < n; k++) {
            Planner.Candidate c = t.pairs[(k + attempt) % n];
            if (c.localLane() != avoid && !lanes[c.localLane()].paused(now)) {
                return c;
            }
        }
        Planner.Candidate soonest = null;
        for (Planner.Candidate c : t.pairs) {
            LaneRuntime l = lanes[c.localLane()];
            if (!l.failed && (soonest == null || l.pausedUntilNanos - lanes[soonest.localLane()].pausedUntilNanos < 0)) {
                soonest = c;
            }
        }
        return soonest;
    }

    /** Whether a stripe waiting on paused lane {@code l} has somewhere better to go now. */
    boolean hasHealthyAlternative(TransferImpl t, int lane) {
        long now = System.nanoTime();
        for (Planner.Candidate c : t.pairs) {
            if (c.localLane() != lane && !lanes[c.localLane()].paused(now)) {
                return true;
            }
        }
        return false;
    }

    /** A notification copy failed on {@code failed}: send it on another lane (it still vouches for its original lane). */
    void retryNotification(NotifyCopy copy, LaneRuntime failed, String error) {
        TransferImpl t = copy.transfer;
        if (copy.abandoned()) {
            return;
        }
        copy.attempts++;
        t.retries.incrementAndGet();
        if (copy.attempts > config.maxRetries()) {
            t.fail(t.laneFailure("notification " + t.tag + " after a " + t.total + "-byte write"));
            return;
        }
        Planner.Candidate c = pickLane(t, failed.lane, copy.attempts);
        if (c == null) {
            t.fail(t.laneFailure("notification " + t.tag + " after a " + t.total + "-byte write"));
            return;
        }
        copy.lane = c.localLane();
        copy.remoteLane = c.remoteLane();
        copy.connection = t.peer.connection[c.localLane()];
        lanes[c.localLane()].owner.submit(copy);
    }

    void onImmediate(int immediate) {
        int id = immediate >>> 16;
        InChannel ch = inboxes.get(id);
        if (ch == null) {
            strayImmediates.incrementAndGet();
            return;
        }
        InChannel.Record r = ch.accept((immediate >>> 8) & 0xFF, immediate & 0xFF);
        if (r == null) {
            return;
        }
        Published p = publishedByGeneration.get(r.generation());
        String bufferName = p == null ? null : p.name();
        if (p != null && p.buffer().device != null) {
            // the written range goes to the device (copy or flush) before the user sees the notification: off this thread
            Thread.ofVirtual().start(() -> {
                Notification n = null;
                try {
                    n = DeviceBuffers.deliver(ch.peer, r.tag(), bufferName, p.buffer(), r.offset(), r.length(), r.crc(),
                            r.crcValue());
                    notes.add(n);
                } catch (RuntimeException e) {
                    progressError(e);
                } finally {
                    // after the notification, so a writer told of the verdict finds it here; always, or the slot stays
                    if (r.crc()) {
                        judged(ch, r.seq(), n == null ? Notification.Checksum.MISMATCH : n.checksum(),
                                n == null ? -1 : n.actualCrc32c());
                    }
                }
            });
            return;
        }
        if (!r.crc()) {
            notes.add(new Notification(ch.peer, r.tag(), bufferName, r.offset(), r.length(),
                    Notification.Checksum.NOT_REQUESTED, -1, -1));
            return;
        }
        // checksum large ranges off the progress thread
        Thread.ofVirtual().start(() -> {
            long actual = -1;
            Notification.Checksum verdict = Notification.Checksum.MISMATCH;
            try {
                if (p != null && r.offset() >= 0 && r.length() >= 0 && r.offset() <= p.buffer().length() - r.length()
                        && p.buffer().segment.scope().isAlive()) {
                    CRC32C c = new CRC32C();
                    c.update(p.buffer().segment.asSlice(r.offset(), r.length()).asByteBuffer());
                    actual = c.getValue();
                }
                long expected = Integer.toUnsignedLong(r.crcValue());
                // both values go to the user, so a mismatch says what the writer sent and what landed
                verdict = actual == expected ? Notification.Checksum.VERIFIED : Notification.Checksum.MISMATCH;
                notes.add(new Notification(ch.peer, r.tag(), bufferName, r.offset(), r.length(), verdict, expected,
                        actual));
            } catch (RuntimeException e) {
                // the buffer was closed under the check: the writer hears of an unchecked range
                actual = -1;
                verdict = Notification.Checksum.MISMATCH;
                progressError(e);
            } finally {
                judged(ch, r.seq(), verdict, actual);
            }
        });
    }

    /** Tells the writer of record {@code seq} our verdict (it RDMA-reads the word) and frees the record's slot. */
    private static void judged(InChannel ch, long seq, Notification.Checksum verdict, long actual) {
        int code = verdict == Notification.Checksum.VERIFIED ? NotificationRecord.VERDICT_VERIFIED
                : actual < 0 ? NotificationRecord.VERDICT_UNCHECKED : NotificationRecord.VERDICT_MISMATCH;
        ch.verdict(seq, code, actual < 0 ? 0 : (int) actual);
    }

    // ------------------------------------------------------------------ notifications

    @Override
    public Notifications notifications() {
        return notes;
    }

    @Override
    public Notification awaitTag(long tag, Duration timeout) throws InterruptedException {
        return notes.awaitTag(tag, timeout);
    }

    private static final class NotificationQueue implements Notifications {
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition arrived = lock.newCondition();
        private final ArrayDeque<Notification> queue = new ArrayDeque<>();

        void add(Notification n) {
            lock.lock();
            try {
                queue.add(n);
                arrived.signalAll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public Notification poll() {
            lock.lock();
            try {
                return queue.poll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public Notification poll(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            lock.lock();
            try {
                while (queue.isEmpty()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return null;
                    }
                    arrived.awaitNanos(left);
                }
                return queue.poll();
            } finally {
                lock.unlock();
            }
        }

        Notification awaitTag(long tag, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            lock.lock();
            try {
                while (true) {
                    for (Iterator<Notification> it = queue.iterator(); it.hasNext(); ) {
                        Notification n = it.next();
                        if (n.tag() == tag) {
                            it.remove();
                            return n;
                        }
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return null;
                    }
                    arrived.awaitNanos(left);
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public int size() {
            lock.lock();
            try {
                return queue.size();
            } finally {
                lock.unlock();
            }
        }
    }

    // ------------------------------------------------------------------ stats and close

    @Override
    public List<LaneStats> laneStats() {
        List<LaneStats> out = new ArrayList<>();
        long now = System.nanoTime();
        for (LaneRuntime l : lanes) {
            LaneDescriptor d = l.descriptor;
            out.add(new LaneStats(l.lane, d.device(), d.pciAddress(), d.numaNode(), l.bytesCompleted.get(), l.chunksCompleted.get(),
                    l.chunkErrors.get(), l.lastError, l.paused(now)));
        }
        return out;
    }

    @Override
    public long registrationNanos() {
        return registrations.totalRegistrationNanos();
    }

    /** @return the registration cache (tests and benchmarks) */
    public RegistrationCache registrationCache() {
        return registrations;
    }

    /** @return errors the progress threads caught (should stay 0), with the last one */
    public long progressErrors() {
        return progressErrors.get();
    }

    public Throwable lastProgressError() {
        return lastProgressError;
    }

    /** @return transfers not yet finished */
    public int activeTransfers() {
        return active.size();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // every step is attempted: a failing directory must not leak the lanes, inboxes and registrations
        Closing.closeAll(
                () -> {
                    for (TransferImpl t : List.copyOf(active)) {
                        t.fail(new TransferException("engine " + name + " closed with the transfer in flight ("
                                + t.bytesCompleted() + " of " + t.total + " bytes done)"));
                    }
                },
                volumes::close,
                () -> {
                    Rendezvous.Watch w = watch;
                    if (w != null) {
                        w.close();
                    }
                },
                announcementField == null ? null : announcementField::close,
                handshakeServer::close,
                Closing.each(handshakeClients.values()),
                // each engine has its own client, also of the embedded directory (which stays up for the JVM)
                rendezvous::close,
                this::stopThreads,
                timer::shutdownNow,
                () -> Closing.each(peers.values().stream().map(l -> l.channel).filter(c -> c != null).toList()).run(),
                () -> Closing.each(inbound.values().stream().map(Inbound::inbox).toList()).run(),
                () -> Closing.each(List.copyOf(retiredInboxes)).run(),
                registrations::close,
                backend::close);
    }

    private void stopThreads() {
        for (ProgressThread t : threads) {
            t.stop();
        }
        for (ProgressThread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
