package io.rdma4j.ibverbs.engine;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE_WITH_IMM;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.IdleWait;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.ibverbs.PortAttr;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.QpInfo;
import io.rdma4j.topology.NicAttributes;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * RC queue pairs over libibverbs as engine lanes: the SPI's entry point. Each lane ({@link Lane}) has its own
 * completion queue and one RC queue pair per connection; several lanes share a device's ({@link VerbsDevice})
 * protection domain and memory registrations ({@link RegistrationTable}). A lane's data path is split in two: its
 * {@link SendPath} posts, its {@link CompletionPath} polls; both run on the lane's progress thread.
 *
 * <p><b>Errors.</b> An error completion marks the lane failed (posting returns {@link #FAILED}) and reports every
 * context still outstanding on that connection as failed. {@link #recover} rebuilds the lane's queue pairs in place
 * (RESET, then INIT, RTR, RTS towards the same peer, which recovers its side likewise).
 *
 * <p><b>Disconnects.</b> {@link #disconnect} only unpublishes a connection; its queue pair is destroyed by the lane's
 * progress thread on its next poll, which also reports the requests still outstanding on it as failed (see
 * {@link ConnectionTable}).
 */
final class IbverbsEngineBackend implements EngineBackend {
    static final int PORT = VerbsDevice.PORT;
    /** The most RDMA writes one vectored write chains (one post, one doorbell). */
    static final int VECTOR_LIMIT = 16;
    /** Whether idle progress threads sleep on the lanes' completion channels ({@code -Drdma4j.ibverbs.idleWait}). */
    static final boolean IDLE_WAIT = Boolean.parseBoolean(System.getProperty("rdma4j.ibverbs.idleWait", "true"));

    private final List<VerbsDevice> devices = new ArrayList<>();
    private final List<Lane> lanes = new ArrayList<>();
    private final List<SendPath> sends = new ArrayList<>();
    private final List<CompletionPath> completions = new ArrayList<>();
    private final List<LaneDescriptor> descriptors = new ArrayList<>();
    private final RegistrationTable registrations;
    private volatile boolean closed;

    IbverbsEngineBackend(List<String> deviceNames, BackendConfig config) {
        Function<String, NicAttributes> topology = NicAttributes.scanLive();
        int[] deviceOfLane = new int[deviceNames.size() * config.lanesPerDevice()];
        this.registrations = new RegistrationTable(devices, deviceOfLane);
        try {
            for (String name : deviceNames) {
                VerbsDevice d = VerbsDevice.open(devices.size(), name);
                devices.add(d);
                NicAttributes nic = topology.apply(name);
                // sysfs's rate is what the kernel derives from these same codes; the verbs query covers a device
                // that sysfs does not describe
                double rate = nic.rateGbps() == NicAttributes.UNKNOWN_RATE_GBPS && VerbsDevice.gbps(d.port) > 0
                        ? VerbsDevice.gbps(d.port)
                        : nic.rateGbps();
                for (int k = 0; k < config.lanesPerDevice(); k++) {
                    int idx = lanes.size();
                    Lane l = new Lane(idx, d, config.queueDepth());
                    lanes.add(l);
                    SendPath send = new SendPath(l, registrations);
                    sends.add(send);
                    completions.add(new CompletionPath(l, send));
                    deviceOfLane[idx] = d.index;
                    descriptors.add(new LaneDescriptor(
                            idx, name, nic.pciAddress(), nic.numaNode(), rate, Math.max(1, d.port.maxMsgSz())));
                }
            }
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, this);
        }
    }

    /** Link speed from the port's active width and speed codes (IBTA encodings); 0 when unknown. */
    static double gbps(PortAttr p) {
        return VerbsDevice.gbps(p);
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

    /**
     * A kernel wait over {@code lanes}: their completion queues announce completions on their channels once armed
     * ({@link VerbsIdleWait}). {@code -Drdma4j.ibverbs.idleWait=false} keeps the progress threads parking instead.
     */
    @Override
    public IdleWait idleWait(int[] lanes) {
        if (!IDLE_WAIT || lanes.length == 0) {
            return null;
        }
        Lane[] mine = new Lane[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            mine[i] = lane(lanes[i]);
        }
        return new VerbsIdleWait(mine);
    }

    private Lane lane(int lane) {
        if (lane < 0 || lane >= lanes.size()) {
            throw new IndexOutOfBoundsException("lane " + lane + " is outside [0, " + lanes.size() + ")");
        }
        return lanes.get(lane);
    }

    @Override
    public BackendRegistration register(MemorySegment segment) {
        ensureOpen();
        return registrations.add(
                segment.address(), segment.byteSize(), pd -> pd.register(segment, RegistrationTable.ACCESS));
    }

    /**
     * Registers GPU memory on every device's protection domain through {@link ProtectionDomain#registerDevice}: dma-buf
     * first, then {@code ibv_reg_mr} on the device address (nvidia_peermem); the one error naming both paths otherwise.
     */
    @Override
    public BackendRegistration registerDevice(DeviceMemory memory) {
        ensureOpen();
        return registrations.add(
                memory.address(), memory.length(), pd -> pd.registerDevice(memory, RegistrationTable.ACCESS));
    }

    @Override
    public int prepareConnection(int lane) {
        ensureOpen();
        return lane(lane).prepare();
    }

    @Override
    public byte[] endpointInfo(int lane, int connection) {
        ensureOpen();
        return lane(lane).endpointInfo(connection);
    }

    @Override
    public void connect(int lane, int connection, byte[] remoteEndpointInfo) {
        ensureOpen();
        QpInfo remote = QpInfo.decode(remoteEndpointInfo);
        lane(lane).connect(connection, remote);
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
        SendPath send = sendPath(lane);
        if (send == null) {
            return FAILED;
        }
        try {
            return send.post(
                    connection, opcode, localHandle, localAddress, length, remoteAddress, remoteKey, imm, context);
        } catch (RuntimeException e) {
            lanes.get(lane).error = "lane " + lane + ": posting failed: " + e;
            return FAILED;
        }
    }

    /**
     * The send path of {@code lane}, or null when there is nothing to post on: no such lane (no lane to record a reason
     * on; the engine only posts on lanes it was given), or the backend closed (recorded on the lane).
     */
    private SendPath sendPath(int lane) {
        if (lane < 0 || lane >= lanes.size()) {
            return null;
        }
        if (closed) {
            lanes.get(lane).error = "lane " + lane + ": the ibverbs engine backend is closed";
            return null;
        }
        return sends.get(lane);
    }

    /** A quarter of the lane's send queue, at most {@link #VECTOR_LIMIT}: a chain always fits an empty queue. */
    @Override
    public int writeVectorLimit(int lane) {
        return lane < 0 || lane >= lanes.size() ? 1 : Math.clamp(lanes.get(lane).sqDepth / 4, 1, VECTOR_LIMIT);
    }

    @Override
    public int postWriteVector(
            int lane,
            int connection,
            int localHandle,
            long[] localAddresses,
            long[] remoteAddresses,
            long[] lengths,
            int count,
            long remoteKey,
            long context) {
        SendPath send = sendPath(lane);
        if (send == null) {
            return FAILED;
        }
        int limit = writeVectorLimit(lane);
        if (limit == 1) {
            throw new UnsupportedOperationException("lane " + lane + "'s send queue is too short for vectored writes"
                    + " (its writeVectorLimit is 1): post each piece with postWrite");
        }
        if (count < 2 || count > limit || count > lengths.length) {
            throw new IllegalArgumentException("a vectored write on lane " + lane + " takes 2 to " + limit
                    + " pieces (and arrays that hold them); got " + count + " of " + lengths.length);
        }
        try {
            return send.postVector(
                    connection, localHandle, localAddresses, remoteAddresses, lengths, count, remoteKey, context);
        } catch (RuntimeException e) {
            lanes.get(lane).error = "lane " + lane + ": posting a vectored write failed: " + e;
            return FAILED;
        }
    }

    @Override
    public int poll(int lane, Completions out) {
        if (closed) {
            out.clear();
            return 0;
        }
        lane(lane);
        return completions.get(lane).poll(out);
    }

    @Override
    public String laneError(int lane) {
        return lane(lane).error;
    }

    @Override
    public boolean recover(int lane) {
        ensureOpen();
        Lane l = lane(lane);
        completions.get(lane).discardQueued();
        return l.rebuild();
    }

    /** Closes lanes (their queue pairs first), then registrations, then devices; expects no progress thread running. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<AutoCloseable> order = new ArrayList<>();
        order.addAll(sends);
        order.addAll(completions);
        lanes.forEach(l -> order.add(l::close));
        order.add(registrations::closeAll);
        devices.forEach(d -> order.add(d::close));
        Closeables.closeAll(order);
    }
}
