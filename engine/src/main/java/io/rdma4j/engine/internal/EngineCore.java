package io.rdma4j.engine.internal;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.Closeables;
import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.LaneStats;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.Notifications;
import io.rdma4j.engine.Peer;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferBatch;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferRequest;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.engine.WriteBatch;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.rendezvous.HandshakeServer;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine: wires its pieces and implements {@link TransferEngine} over them. {@link BackendSelection} opens the
 * backend, {@link Membership} announces us and watches the others, {@link Publications} holds our published buffers,
 * {@link Connector} and {@link HandshakeService} connect lanes to peers, {@link Preparer} checks and plans a transfer,
 * {@link Dispatcher} carries it over the {@link ProgressThread}s, {@link Inbound} takes what peers send us into
 * {@link NotificationQueue}.
 */
public final class EngineCore implements TransferEngine {
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String name;
    private final EngineBackend backend;
    private final LaneRuntime[] lanes;
    private final ProgressThread[] threads;
    private final LaneLevels levels;
    private final RegistrationCache registrations;
    private final ScheduledExecutorService timer;
    private final Rendezvous rendezvous;
    private final HandshakeServer handshakeServer;
    private final NotificationQueue notes = new NotificationQueue();
    private final ProgressErrors errors = new ProgressErrors();
    private final Publications publications;
    private final Inbound inbound;
    private final Membership membership;
    private final Connector connector;
    private final Dispatcher dispatcher;
    private final Preparer preparer;
    private final Volumes volumes;
    private final EngineConfig config;
    private final EngineMetrics metrics;
    private volatile boolean closed;

    private EngineCore(EngineConfig config, String name, EngineBackend backend) {
        this.config = config;
        this.name = name;
        this.backend = backend;
        long generation = PeerInfo.newGeneration();
        List<LaneDescriptor> descriptors = List.copyOf(backend.lanes());
        this.lanes = lanes(backend, descriptors, config.queueDepth());
        this.levels = TopologyLevels.create(config.topology(), descriptors);
        this.registrations = new RegistrationCache(backend, 1024, Duration.ofSeconds(30));
        this.metrics = EngineMetrics.create(config.meterRegistry(), name, lanes, registrations);
        this.volumes = new Volumes(
                name, config.topology(), config.chunkBytes(), registrations, metrics, config.meterRegistry());
        WireLanes wire = new WireLanes(backend, descriptors);
        this.publications = new Publications(name, descriptors, registrations);
        int nThreads = Math.max(1, Math.min(config.progressThreads(), lanes.length));
        this.inbound = new Inbound(name, backend, descriptors, publications, notes, errors, nThreads);
        this.timer = Executors.newSingleThreadScheduledExecutor(r ->
                Thread.ofPlatform().daemon(true).name("rdma4j-timer-" + name).unstarted(r));
        ActiveTransfers active = new ActiveTransfers();
        this.dispatcher =
                new Dispatcher(name, backend, lanes, registrations, metrics, timer, config, active, () -> closed);
        metrics.watch(dispatcher, notes, inbound);
        this.threads = new ProgressThread[nThreads];
        for (int t = 0; t < nThreads; t++) {
            List<LaneRuntime> mine = new ArrayList<>();
            for (int i = t; i < lanes.length; i += nThreads) {
                mine.add(lanes[i]);
            }
            threads[t] = new ProgressThread(
                    dispatcher,
                    inbound,
                    errors,
                    backend,
                    mine.toArray(new LaneRuntime[0]),
                    config.busySpin() ? IdleStrategy.busySpin() : IdleStrategy.backoff(),
                    config.chunkBytes(),
                    t,
                    "rdma4j-progress-" + name + "-" + t);
        }
        // the meters are in the caller's registry already: take them out again when the directory cannot be reached
        try {
            boolean embedded = config.directory() == null;
            this.rendezvous = Rendezvous.connect(
                    embedded ? Rendezvous.embeddedTarget() : config.directory(),
                    config.security(),
                    config.rendezvousDeadline());
            HandshakeServer.Builder hs = HandshakeServer.builder(
                            name,
                            generation,
                            new HandshakeService(name, lanes, wire, inbound, publications, () -> closed))
                    .security(config.security());
            if (embedded || config.directory().startsWith("inproc:")) {
                hs.inProcess("rdma4j-handshake-" + name + "-" + generation);
            }
            this.handshakeServer = hs.start();
            this.membership = new Membership(
                    name,
                    generation,
                    rendezvous,
                    handshakeServer,
                    wire,
                    lanes.length,
                    inbound,
                    active,
                    timer,
                    () -> closed);
            this.connector = new Connector(
                    name,
                    generation,
                    config.security(),
                    config.rendezvousDeadline(),
                    lanes,
                    wire,
                    membership::lapseRevision);
            this.preparer = new Preparer(
                    name, lanes, descriptors, levels, config, registrations, membership, connector, active, metrics);
        } catch (RuntimeException e) {
            metrics.close();
            for (ProgressThread t : threads) {
                t.discard();
            }
            throw e;
        }
    }

    private static LaneRuntime[] lanes(EngineBackend backend, List<LaneDescriptor> descriptors, int depth) {
        if (descriptors.isEmpty() || descriptors.size() > NotificationRecord.MAX_LANES) {
            throw new BackendUnavailableException(
                    "backend " + backend.name() + " offers " + descriptors.size()
                            + " lanes; the engine drives 1.." + NotificationRecord.MAX_LANES
                            + " (lower lanesPerNic or filter NICs)",
                    null);
        }
        LaneRuntime[] out = new LaneRuntime[descriptors.size()];
        for (int i = 0; i < out.length; i++) {
            if (descriptors.get(i).index() != i) {
                throw new Rdma4jException("backend " + backend.name() + " numbered lane " + i + " as "
                        + descriptors.get(i).index() + ": a bug in the backend, please report it");
            }
            out[i] = new LaneRuntime(descriptors.get(i), depth);
        }
        return out;
    }

    /** Opens an engine: backend, lanes, progress threads, handshake service, announcement and membership watch. */
    public static EngineCore open(EngineConfig c) {
        BackendSelection.validate(c);
        String name = c.name() != null
                ? c.name()
                : "engine-" + ProcessHandle.current().pid() + "-" + INSTANCES.incrementAndGet();
        EngineBackend raw = BackendSelection.open(c);
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
            try {
                e.close();
            } catch (RuntimeException closing) {
                ex.addSuppressed(closing);
            }
            throw ex;
        }
        return e;
    }

    private void start() {
        for (ProgressThread t : threads) {
            t.start();
        }
        publications.announceThrough(membership.announce(config.lease()));
    }

    // ------------------------------------------------------------------ API

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        boolean kernel = threads.length > 0 && threads[0].waitsInKernel();
        return name + ": " + backend.description() + ", " + lanes.length + " lane(s), " + threads.length
                + " progress thread(s)" + (kernel ? " sleeping in the kernel when idle" : "") + "; " + levels.source();
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
        Args.nativeMemory(segment, "segment to register");
        if (segment.byteSize() == 0) {
            throw new InvalidArgumentException("cannot register an empty segment: allocate at least one byte");
        }
        Objects.requireNonNull(location, "location is null: pass MemoryLocation.HOST when unknown");
        RegistrationCache.Lease lease = registrations.acquire(segment);
        return new BufferImpls.Local(registrations, segment, location, lease.entry(), lease.reused());
    }

    @Override
    public LocalBuffer register(DeviceMemory memory) {
        ensureOpen();
        LocalBuffer b = DeviceBuffers.register(backend, registrations, memory, () -> volumes.deviceClosed(memory));
        volumes.deviceOpened(memory);
        return b;
    }

    @Override
    public void publish(String bufferName, LocalBuffer buffer, Access access) {
        ensureOpen();
        publications.publish(bufferName, preparer.local(buffer, "buffer to publish"), access);
    }

    @Override
    public void unpublish(String bufferName) {
        ensureOpen();
        publications.unpublish(bufferName);
    }

    @Override
    public Peer peer(String peerName) {
        ensureOpen();
        return membership.peer(peerName);
    }

    // ------------------------------------------------------------------ transfers

    @Override
    public Transfer write(
            LocalBuffer source,
            long sourceOffset,
            RemoteBuffer target,
            long targetOffset,
            long length,
            TransferOptions options) {
        ensureOpen();
        return launch(preparer.prepare(Op.WRITE, source, sourceOffset, target, targetOffset, length, options));
    }

    @Override
    public Transfer read(
            LocalBuffer target,
            long targetOffset,
            RemoteBuffer source,
            long sourceOffset,
            long length,
            TransferOptions options) {
        if (options != null && options.notifies()) {
            throw new InvalidArgumentException("a read cannot carry a notification tag: the peer's memory is only read;"
                    + " write to it to notify");
        }
        ensureOpen();
        return launch(preparer.prepare(Op.READ, target, targetOffset, source, sourceOffset, length, options));
    }

    private Transfer launch(TransferImpl p) {
        if (p.local.device != null) {
            preparer.beforeDevice(List.of(p));
        }
        return preparer.afterDevice(p, dispatcher.launch(p));
    }

    @Override
    public WriteBatch newWriteBatch(LocalBuffer source, RemoteBuffer target, int capacity) {
        ensureOpen();
        return new BatchImpl(preparer.local(source, "batch source"), preparer.remote(target, "batch target"), capacity);
    }

    @Override
    public Transfer write(WriteBatch batch, TransferOptions options) {
        Objects.requireNonNull(batch, "batch");
        ensureOpen();
        if (!(batch instanceof BatchImpl b) || b.source.registrations != registrations) {
            throw new InvalidArgumentException(
                    "the write batch was not made by this engine (" + name + "): make it with engine.newWriteBatch");
        }
        if (!b.acquire()) {
            throw new IllegalStateException("the write batch is already being written: join its transfer before"
                    + " writing it again (after a failure, wait until batch.inFlight() is false)");
        }
        TransferImpl p;
        try {
            p = preparer.prepareBatch(b, options);
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
        return launch(p);
    }

    @Override
    public TransferBatch writeAll(List<TransferRequest> requests) {
        Objects.requireNonNull(requests, "requests");
        ensureOpen();
        List<TransferImpl> prepared = new ArrayList<>(requests.size());
        for (int i = 0; i < requests.size(); i++) {
            TransferRequest r = requests.get(i);
            try {
                Objects.requireNonNull(r, "request");
                prepared.add(preparer.prepare(
                        Op.WRITE, r.source(), r.sourceOffset(), r.target(), r.targetOffset(), r.length(), r.options()));
            } catch (RuntimeException e) {
                for (TransferImpl p : prepared) {
                    registrations.release(p.local.entry);
                }
                if (e instanceof InvalidArgumentException) {
                    throw new InvalidArgumentException(
                            "request " + i + " of the batch: " + e.getMessage() + " (nothing was posted)", e);
                }
                throw e;
            }
        }
        preparer.beforeDevice(prepared);
        List<Transfer> out = new ArrayList<>(prepared.size());
        for (TransferImpl p : prepared) {
            out.add(preparer.afterDevice(p, dispatcher.launch(p)));
        }
        return TransferBatch.of(out);
    }

    @Override
    public Plan explain(LocalBuffer source, long sourceOffset, RemoteBuffer target, long targetOffset, long length) {
        ensureOpen();
        return preparer.explain(source, sourceOffset, target, targetOffset, length);
    }

    // ------------------------------------------------------------------ volumes (remote block storage)

    @Override
    public StorageVolume openVolume(VolumeSpec spec) {
        ensureOpen();
        return volumes.open(spec);
    }

    @Override
    public Transfer write(
            LocalBuffer source,
            long sourceOffset,
            VolumeExtent target,
            long targetOffset,
            long length,
            TransferOptions options) {
        ensureOpen();
        return volumes.launch(
                true, preparer.local(source, "write source"), sourceOffset, target, targetOffset, length, options);
    }

    @Override
    public Transfer read(
            LocalBuffer target,
            long targetOffset,
            VolumeExtent source,
            long sourceOffset,
            long length,
            TransferOptions options) {
        ensureOpen();
        return volumes.launch(
                false, preparer.local(target, "read target"), targetOffset, source, sourceOffset, length, options);
    }

    @Override
    public Plan explain(LocalBuffer source, long sourceOffset, VolumeExtent target, long targetOffset, long length) {
        ensureOpen();
        return volumes.explain(preparer.local(source, "explain source"), sourceOffset, target, targetOffset, length);
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

    // ------------------------------------------------------------------ stats and close

    @Override
    public List<LaneStats> laneStats() {
        List<LaneStats> out = new ArrayList<>();
        long now = System.nanoTime();
        for (LaneRuntime l : lanes) {
            LaneDescriptor d = l.descriptor;
            out.add(new LaneStats(
                    l.lane,
                    d.device(),
                    d.pciAddress(),
                    d.numaNode(),
                    l.bytesCompleted.get(),
                    l.chunksCompleted.get(),
                    l.chunkErrors.get(),
                    l.lastError,
                    l.paused(now)));
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
        return errors.count();
    }

    public Throwable lastProgressError() {
        return errors.last();
    }

    /** @return transfers not yet finished */
    public int activeTransfers() {
        return dispatcher.activeTransfers();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // every step is attempted: a failing directory must not leak the lanes, inboxes and registrations
        Closeables.closeAll(
                dispatcher::failAll,
                volumes::close,
                membership::stopWatching,
                membership::withdraw,
                handshakeServer::close,
                connector::close,
                // each engine has its own client, also of the embedded directory (which stays up for the JVM)
                rendezvous::close,
                this::stopThreads,
                timer::shutdownNow,
                () -> Closeables.closeAll(membership.peers().stream()
                        .map(l -> l.channel)
                        .filter(c -> c != null)
                        .toList()),
                inbound::close,
                registrations::close,
                metrics::close,
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
