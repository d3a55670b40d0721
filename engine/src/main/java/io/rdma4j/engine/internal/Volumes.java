package io.rdma4j.engine.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.BackendUnavailableException;
import io.rdma4j.ClosedException;
import io.rdma4j.DeviceRegistrationException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.PlanLane;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.engine.spi.BlockNamespace;
import io.rdma4j.engine.spi.BlockStore;
import io.rdma4j.engine.spi.BlockStoreProvider;
import io.rdma4j.engine.spi.BlockTarget;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.topology.Topology;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The engine's storage volumes: opening (provider, NIC choice, connections), checking and launching transfers, plans.
 * One dispatcher thread per engine issues pieces and runs deadlines; the I/O itself runs on the providers' threads.
 */
final class Volumes implements AutoCloseable {
    private final String engineName;
    private final Path topologyPath;
    private final long chunkBytes;
    private final RegistrationCache registrations;
    final EngineMetrics metrics;
    private final MeterRegistry registry;
    private final Set<VolumeImpl> open = ConcurrentHashMap.newKeySet();
    private volatile ScheduledExecutorService dispatcher;
    private volatile Thread dispatcherThread;
    private Topology topology;
    private String topologyProblem;
    private boolean topologyLoaded;
    private volatile boolean closed;
    /**
     * Per device memory registered with the engine: its open handles, and the namespaces that registered it for direct
     * I/O, which release it when the last handle is gone (guarded by this).
     */
    private final Map<DeviceMemory, DeviceUse> devices = new IdentityHashMap<>();

    private static final class DeviceUse {
        int handles;
        final Set<BlockNamespace> namespaces = Collections.newSetFromMap(new IdentityHashMap<>());
    }

    /**
     * @param metrics the engine's meters, where volume transfers are timed and their failures counted
     * @param registry the engine's registry, handed to the providers for their connections' meters; null for none
     */
    Volumes(
            String engineName,
            Path topologyPath,
            long chunkBytes,
            RegistrationCache registrations,
            EngineMetrics metrics,
            MeterRegistry registry) {
        this.registrations = registrations;
        this.metrics = metrics;
        this.registry = registry;
        this.engineName = engineName;
        this.topologyPath = topologyPath;
        this.chunkBytes = chunkBytes;
    }

    private synchronized ScheduledExecutorService dispatcher() {
        if (dispatcher == null) {
            dispatcher = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = Thread.ofPlatform()
                        .daemon(true)
                        .name("rdma4j-volumes-" + engineName)
                        .unstarted(r);
                dispatcherThread = t;
                return t;
            });
            dispatcher.execute(() -> {}); // start the thread, so buffers can be checked against it
        }
        return dispatcher;
    }

    private synchronized Topology topology() {
        if (!topologyLoaded) {
            topologyLoaded = true;
            try {
                topology = TopologyLevels.load(topologyPath);
            } catch (RuntimeException e) {
                topologyProblem = e.getMessage();
            }
        }
        return topology;
    }

    StorageVolume open(VolumeSpec spec) {
        if (closed) {
            throw new ClosedException("transfer engine " + engineName);
        }
        Objects.requireNonNull(spec, "volume spec is null: VolumeSpec.of(\"tcp://HOST:4420/NQN/NSID\")");
        Map<BlockTarget, List<Integer>> byTarget = new LinkedHashMap<>();
        for (int i = 0; i < spec.namespaces().size(); i++) {
            VolumeSpec.Namespace n = spec.namespaces().get(i);
            byTarget.computeIfAbsent(
                            new BlockTarget(n.transport(), n.host(), n.port(), n.subsystemNqn()),
                            k -> new ArrayList<>())
                    .add(i);
        }
        int count = spec.namespaces().size();
        BlockNamespace[] namespaces = new BlockNamespace[count];
        BlockStore[] storeOf = new BlockStore[count];
        NicChooser.Choice[] nics = new NicChooser.Choice[count];
        List<BlockStore> stores = new ArrayList<>();
        try {
            for (Map.Entry<BlockTarget, List<Integer>> e : byTarget.entrySet()) {
                BlockTarget target = e.getKey();
                BlockStoreProvider provider = provider(target.transport());
                NicChooser.Choice nic = choose(spec, target);
                BlockStore store;
                try {
                    store = provider.connect(target, spec.options(), nic.source(), registry);
                } catch (IllegalArgumentException ex) {
                    // a provider's option or transport check: an argument of openVolume, reported as the engine's are
                    throw new InvalidArgumentException("opening volume: " + target + ": " + ex.getMessage(), ex);
                } catch (Rdma4jException ex) {
                    throw new Rdma4jException(
                            "opening volume: connecting to " + target + " via " + nic.label() + " (" + nic.reason()
                                    + ") failed: " + ex.getMessage(),
                            ex);
                }
                stores.add(store);
                for (int i : e.getValue()) {
                    try {
                        namespaces[i] = store.namespace(spec.namespaces().get(i).nsid());
                    } catch (IllegalArgumentException ex) {
                        throw new InvalidArgumentException("opening volume: " + ex.getMessage(), ex);
                    }
                    storeOf[i] = store;
                    nics[i] = nic;
                }
            }
            // Adjacent units of one namespace (a volume of one, or a zone of one) merge into pieces as large as one
            // command
            // carries: fewer, larger commands, as a direct Controller call would issue.
            long perCommand = Long.MAX_VALUE;
            for (BlockStore s : stores) {
                perCommand = Math.min(perCommand, Math.max(4096, s.maxTransferBytes()));
            }
            VolumeImpl v = new VolumeImpl(
                    this,
                    spec,
                    stores,
                    namespaces,
                    storeOf,
                    nics,
                    Math.max(spec.stripeUnit(), Math.max(chunkBytes, perCommand)));
            open.add(v);
            if (closed) {
                v.close();
                throw new ClosedException("transfer engine " + engineName);
            }
            return v;
        } catch (RuntimeException ex) {
            for (BlockStore s : stores) {
                try {
                    s.close();
                } catch (RuntimeException suppressed) {
                    ex.addSuppressed(suppressed);
                }
            }
            throw ex;
        }
    }

    private NicChooser.Choice choose(VolumeSpec spec, BlockTarget target) {
        if (spec.sourceAddress() != null) {
            return new NicChooser.Choice(
                    "given",
                    "-",
                    spec.sourceAddress(),
                    "-",
                    "source address " + spec.sourceAddress().getHostAddress()
                            + " given by VolumeSpec.withSourceAddress");
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(target.host());
        } catch (UnknownHostException e) {
            address = null;
        }
        Topology t = topology();
        NicChooser.Choice c = NicChooser.choose(t, topologyProblem, spec.near(), address, NicChooser.Interfaces.LIVE);
        if (c.source() == null) {
            return c;
        }
        String how = target.transport().equals("rdma")
                ? "; RDMA-CM resolves from this address, so the connection uses this device"
                : "; NVMe/TCP binds its sockets to this address (the kernel still routes by destination: this NIC carries the traffic"
                        + " when its subnet holds the target or policy routing sends it there)";
        return new NicChooser.Choice(c.nic(), c.netdev(), c.source(), c.level(), c.reason() + how);
    }

    private static BlockStoreProvider provider(String transport) {
        List<String> why = new ArrayList<>();
        for (BlockStoreProvider p : ServiceLoader.load(BlockStoreProvider.class, Volumes.class.getClassLoader())) {
            if (!p.transports().contains(transport)) {
                continue;
            }
            String cause = p.unavailabilityCause(transport);
            if (cause == null) {
                return p;
            }
            why.add(p.name() + ": " + cause);
        }
        if (why.isEmpty()) {
            throw new BackendUnavailableException(
                    "no block-store provider for transport '" + transport + "' on the class path: add"
                            + " rdma4j-nvmeof as a dependency",
                    null);
        }
        throw new BackendUnavailableException(
                "transport '" + transport + "' cannot be used here: " + String.join("; ", why), null);
    }

    void closed(VolumeImpl v) {
        open.remove(v);
    }

    /**
     * Checks everything, then launches; nothing is issued when a check fails. Device memory goes through host memory
     * (the block stores move CPU-addressable memory: NVMe/TCP copies it into sockets, NVMe/RDMA registers host pages
     * itself): the registration's staging copy when the engine staged it, else a host copy of the range made for this
     * transfer, or a bounce pool as large as the pieces in flight ({@link DeviceStaging}). A write syncs the producer,
     * then copies each piece to host just before issuing it; a read copies each piece to the device as it arrives,
     * while the other pieces move, and completes its future only after the last copy; a failed or cancelled read copies
     * no piece that arrives after it failed. The registration is held, and the host memory kept, until no piece is in
     * flight.
     */
    Transfer launch(
            boolean write,
            BufferImpls.Local local,
            long memoryOffset,
            VolumeExtent extent,
            long extentOffset,
            long length,
            TransferOptions options) {
        VolumeImpl v = check(write, local, memoryOffset, extent, extentOffset, length, options);
        ScheduledExecutorService d = dispatcher();
        if (local.device == null && !local.segment.isAccessibleBy(dispatcherThread)) {
            throw new InvalidArgumentException((write ? "source" : "target")
                    + " memory belongs to a confined arena, so the engine's threads cannot"
                    + " move it: allocate it from Arena.ofShared() (or Arena.global())");
        }
        VolumeTransfer t = local.device == null
                ? new VolumeTransfer(
                        v,
                        write,
                        VolumeTransfer.PieceMemory.slices(local.segment, memoryOffset),
                        extent.byteOffset() + extentOffset,
                        length,
                        d,
                        null,
                        null)
                : throughDevice(write, local, memoryOffset, v, extent.byteOffset() + extentOffset, length, d);
        v.active.add(t);
        if (options != null && options.deadline() != null) {
            t.deadlineTask = d.schedule(
                    () -> t.deadlinePassed(options.deadline()),
                    options.deadline().toNanos(),
                    TimeUnit.NANOSECONDS);
        }
        if (v.isClosed()) {
            // a transfer's future fails with a TransferException, whatever stopped it (Rdma4jException's rule)
            t.fail(new TransferException("volume " + v.name + " closed before the transfer started: open it again"
                    + " with engine.openVolume"));
        } else {
            t.start();
        }
        return t;
    }

    /**
     * Device memory: moved straight between the targets and the device when every namespace's transport can reach it
     * ({@link BlockNamespace#registerDevice}: NVMe/RDMA keyed SGLs at the NIC's registration of it), else staged
     * through host memory.
     */
    private VolumeTransfer throughDevice(
            boolean write,
            BufferImpls.Local local,
            long memoryOffset,
            VolumeImpl v,
            long volumeOffset,
            long length,
            ScheduledExecutorService d) {
        if (directRefusal(v, local) != null) {
            return throughHost(write, local, memoryOffset, v, volumeOffset, length, d);
        }
        DeviceMemory memory = local.device.memory();
        if (write) {
            syncProducer(local, v, length);
        }
        registrations.retain(local.entry);
        MemorySegment device = MemorySegment.ofAddress(memory.address()).reinterpret(memory.length());
        return new VolumeTransfer(
                v,
                write,
                VolumeTransfer.PieceMemory.slices(device, memoryOffset),
                volumeOffset,
                length,
                d,
                write ? null : memory::afterNicWrite,
                () -> registrations.release(local.entry));
    }

    /** Before a write from device memory: the device's work that produced it completes. */
    private static void syncProducer(BufferImpls.Local local, VolumeImpl v, long length) {
        try {
            DeviceBuffers.beforeVolumeWrite(local);
        } catch (RuntimeException e) {
            throw new TransferException(
                    "write of " + length + " bytes from " + local + " to volume " + v.name
                            + ": syncing the device's producer failed, nothing was issued: " + e.getMessage(),
                    e);
        }
    }

    /**
     * Registers device memory with every namespace of {@code v} (once per namespace: they keep it until the engine's
     * last handle on the memory is closed, {@link #deviceClosed}).
     *
     * @return null when all of them reach it directly, else the first one's reason why not
     */
    private String directRefusal(VolumeImpl v, BufferImpls.Local local) {
        DeviceMemory memory = local.device.memory();
        for (BlockNamespace ns : v.namespaces) {
            try {
                ns.registerDevice(memory);
            } catch (DeviceRegistrationException e) {
                return e.getMessage();
            }
            synchronized (this) {
                DeviceUse u = devices.get(memory);
                if (u != null) {
                    u.namespaces.add(ns);
                }
            }
        }
        return null;
    }

    /** The engine opened a handle on {@code memory}. */
    synchronized void deviceOpened(DeviceMemory memory) {
        devices.computeIfAbsent(memory, m -> new DeviceUse()).handles++;
    }

    /**
     * A handle on {@code memory} is gone (closed, and no transfer holds it): with the last one, every namespace that
     * registered it releases its registration, so the NICs unpin it before its owner frees it.
     */
    void deviceClosed(DeviceMemory memory) {
        List<BlockNamespace> release;
        synchronized (this) {
            DeviceUse u = devices.get(memory);
            if (u == null || --u.handles > 0) {
                return;
            }
            devices.remove(memory);
            release = List.copyOf(u.namespaces);
        }
        for (BlockNamespace ns : release) {
            try {
                ns.deregisterDevice(memory);
            } catch (RuntimeException e) {
                // its connection failed or closed: the registration went with it
            }
        }
    }

    private VolumeTransfer throughHost(
            boolean write,
            BufferImpls.Local local,
            long memoryOffset,
            VolumeImpl v,
            long volumeOffset,
            long length,
            ScheduledExecutorService d) {
        if (write) {
            syncProducer(local, v, length);
        }
        registrations.retain(local.entry);
        Runnable free = () -> {};
        try {
            DeviceStaging staging = new DeviceStaging(local, memoryOffset, length, inFlight(v), v.maxPiece, write);
            free = staging::close;
            Runnable freeHost = free;
            Runnable settled = () -> {
                freeHost.run();
                registrations.release(local.entry);
            };
            return new VolumeTransfer(v, write, staging, volumeOffset, length, d, null, settled);
        } catch (RuntimeException e) {
            free.run();
            registrations.release(local.entry);
            throw e;
        }
    }

    /** {@return the most pieces a transfer on {@code v} has in flight at once} */
    private static int inFlight(VolumeImpl v) {
        int n = 0;
        for (int w : v.window) {
            n += w;
        }
        return n;
    }

    private VolumeImpl check(
            boolean write,
            BufferImpls.Local local,
            long memoryOffset,
            VolumeExtent extent,
            long extentOffset,
            long length,
            TransferOptions options) {
        if (closed) {
            throw new ClosedException("transfer engine " + engineName);
        }
        String side = write ? "write to" : "read from";
        Objects.requireNonNull(extent, side + " a volume: the extent is null (volume.extent(startLba, length))");
        if (!(extent.volume() instanceof VolumeImpl v) || v.owner != this) {
            throw new InvalidArgumentException(extent + " is not of a volume this engine (" + engineName
                    + ") opened: use engine.openVolume(spec).extent(...)");
        }
        v.ensureOpen();
        if (options != null && options.notifies()) {
            throw new InvalidArgumentException("a " + (write ? "write to" : "read from")
                    + " a volume cannot carry a notification tag: storage has no"
                    + " peer to notify; drop withTag(...) and wait on the transfer's future");
        }
        int bs = v.blockSize;
        if (length <= 0 || length % bs != 0) {
            throw new InvalidArgumentException(side + " volume " + v.name + ": length " + length
                    + " is not a positive multiple of its " + bs + "-byte blocks: round it up to "
                    + Math.max(bs, (Math.max(length, 0) + bs - 1) / bs * bs) + " (pad the buffer)");
        }
        if (extentOffset < 0 || extentOffset % bs != 0) {
            throw new InvalidArgumentException(side + " volume " + v.name + ": offset " + extentOffset
                    + " in the extent is negative or not a multiple of " + bs + "-byte blocks");
        }
        if (extentOffset > extent.length() - length) {
            throw new InvalidArgumentException(
                    side + " volume " + v.name + ": " + length + " bytes at offset " + extentOffset
                            + " run past the end of " + extent + ": make the extent longer or the transfer shorter");
        }
        Args.range(local.segment, memoryOffset, length, (write ? "source " : "target ") + local);
        if (!write && local.segment.isReadOnly()) {
            throw new InvalidArgumentException("read target " + local + " is read-only: register a writable segment");
        }
        return v;
    }

    Plan explain(BufferImpls.Local local, long memoryOffset, VolumeExtent extent, long extentOffset, long length) {
        VolumeImpl v = check(true, local, memoryOffset, extent, extentOffset, length, null);
        StripeMap.Pieces p = v.map.split(extent.byteOffset() + extentOffset, length, v.maxPiece);
        List<PlanLane> lanes = new ArrayList<>();
        StringBuilder why = new StringBuilder();
        why.append(length)
                .append(" bytes of volume ")
                .append(v.name)
                .append(": ")
                .append(v.namespaces.length)
                .append(" namespace(s) striped in ")
                .append(v.map.unit() >> 10)
                .append(" KiB units, pieces of up to ")
                .append(v.maxPiece >> 10)
                .append(" KiB kept in flight per namespace");
        if (!local.location.equals(v.spec.near())) {
            why.append("; NICs were chosen for ")
                    .append(v.spec.near())
                    .append(" when the volume was opened, not for this buffer's ")
                    .append(local.location)
                    .append(" (open it with VolumeSpec.near(...) to rank for that memory)");
        }
        String refusal = local.device == null ? null : directRefusal(v, local);
        if (local.device != null && refusal == null) {
            why.append("; device memory moved straight between the targets and the device: every namespace's NIC"
                    + " registered it (NVMe/RDMA keyed SGLs point at it, GPUDirect), so no byte goes through host"
                    + " memory; a write syncs the producer first, a read makes the NICs' writes visible to the device"
                    + " before it completes");
        } else if (local.device != null) {
            why.append("; device memory staged through host memory (")
                    .append(refusal)
                    .append("): a write syncs the producer and copies each piece to ")
                    .append(DeviceStaging.describe(local, length, inFlight(v), v.maxPiece))
                    .append(" just before issuing it, so copies overlap the I/O of the pieces ahead; a read lands each"
                            + " piece in ")
                    .append(DeviceStaging.describe(local, length, inFlight(v), v.maxPiece))
                    .append(" and copies it to the device as it arrives, while the other pieces move, completing"
                            + " after the last copy");
        }
        for (int m = 0; m < v.namespaces.length; m++) {
            NicChooser.Choice c = v.nics[m];
            if (p.count(m) > 0) {
                lanes.add(new PlanLane(
                        m, c.label(), m, v.namespaces[m].describe(), c.level(), "-", p.bytes(m), p.count(m)));
            }
            why.append("; ")
                    .append(v.namespaces[m].describe())
                    .append(" (window ")
                    .append(v.window[m])
                    .append("): via ")
                    .append(c.label())
                    .append(": ")
                    .append(c.reason());
        }
        return new Plan(lanes, length, why.toString());
    }

    @Override
    public void close() {
        closed = true;
        for (VolumeImpl v : List.copyOf(open)) {
            try {
                v.close();
            } catch (RuntimeException e) {
                // the engine is closing: a controller that fails its shutdown is gone either way
            }
        }
        ScheduledExecutorService d = dispatcher;
        if (d != null) {
            d.shutdownNow();
        }
    }
}
