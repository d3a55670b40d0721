package io.rdma4j.libfabric.engine;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.IdleWait;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.FabricException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

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
 * <p>Provider choice for {@code auto}: efa, cxi, verbs, psm3, then shm (same host), then tcp
 * ({@link ProviderSelection}). Each lane ({@link FabricLane}) owns its endpoint, connections, regions and data path; a
 * registration ({@link LaneRegistration}) spans every lane.
 */
public final class LibfabricEngineBackend implements EngineBackend {
    private final String provider;
    private final String description;
    private final List<LaneDescriptor> descriptors;
    private final FabricLane[] lanes;
    private final long immediateMask;
    private final LaneRegistration.Table registrations = new LaneRegistration.Table();
    private volatile boolean closed;

    LibfabricEngineBackend(
            String provider,
            String description,
            List<LaneDescriptor> descriptors,
            FabricLane[] lanes,
            long cqDataSize) {
        this.provider = provider;
        this.description = description;
        this.descriptors = descriptors;
        this.lanes = lanes;
        this.immediateMask = cqDataSize >= 8 ? -1L : (1L << (cqDataSize * 8)) - 1;
    }

    /** Opens lanes on the configured (or best) provider: {@code lanesPerDevice} endpoints per fabric domain. */
    public static LibfabricEngineBackend open(BackendConfig config) {
        return ProviderSelection.open(config);
    }

    @Override
    public String name() {
        return "libfabric";
    }

    /** A kernel wait over {@code lanes} where every one of them has a wait descriptor (tcp), else null. */
    @Override
    public IdleWait idleWait(int[] lanes) {
        FabricLane[] mine = new FabricLane[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            mine[i] = lane(lanes[i]);
            if (mine[i].waitFd() < 0) {
                return null;
            }
        }
        return mine.length == 0 ? null : new FabricIdleWait(mine);
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

    private FabricLane lane(int lane) {
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
        return registrations.register(lanes, segment.address(), segment.byteSize(), d -> d.register(segment));
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
        for (FabricLane l : lanes) {
            String why = l.hmemUnsupported("CUDA");
            if (why != null) {
                throw new io.rdma4j.DeviceRegistrationException(why);
            }
        }
        try {
            return registrations.register(
                    lanes,
                    memory.address(),
                    memory.length(),
                    d -> d.registerCuda(memory.address(), memory.length(), memory.deviceOrdinal(), Domain.ACCESS_ALL));
        } catch (FabricException e) {
            // FI_HMEM is offered but this memory is not registrable (libfabric's CUDA support not initialized, a
            // foreign pointer): the engine can still stage it
            throw new io.rdma4j.DeviceRegistrationException(e.getMessage(), e);
        }
    }

    @Override
    public int prepareConnection(int lane) {
        checkOpen();
        return lane(lane).prepareConnection();
    }

    @Override
    public byte[] endpointInfo(int lane, int connection) {
        return lane(lane).endpointInfo(connection);
    }

    @Override
    public void connect(int lane, int connection, byte[] remoteEndpointInfo) {
        checkOpen();
        FabricLane l = lane(lane);
        if (remoteEndpointInfo == null || remoteEndpointInfo.length == 0) {
            throw new IllegalArgumentException("lane " + lane + ": the peer's endpoint name is empty");
        }
        l.connect(connection, remoteEndpointInfo);
    }

    @Override
    public void disconnect(int lane, int connection) {
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
        if (lane < 0 || lane >= lanes.length) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        return lanes[lane].post(
                FabricLane.WRITE, connection, localHandle, localAddress, length, remoteAddress, remoteKey, 0, context);
    }

    @Override
    public int writeVectorLimit(int lane) {
        return lane < 0 || lane >= lanes.length ? 1 : lanes[lane].vectorLimit();
    }

    @Override
    public long writeVectorBytes(int lane) {
        return lane < 0 || lane >= lanes.length ? Long.MAX_VALUE : lanes[lane].vectorBytes();
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
        if (lane < 0 || lane >= lanes.length) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        int limit = lanes[lane].vectorLimit();
        if (limit == 1) {
            throw new UnsupportedOperationException("lane " + lane + " (" + provider
                    + ") has no vectored write (its writeVectorLimit is 1): post each piece with postWrite");
        }
        if (count < 2 || count > limit || count > lengths.length) {
            throw new IllegalArgumentException("a vectored write on lane " + lane + " takes 2 to " + limit
                    + " pieces (and arrays that hold them); got " + count + " of " + lengths.length);
        }
        return lanes[lane].postVector(
                connection, localHandle, localAddresses, remoteAddresses, lengths, count, remoteKey, context);
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
        return lanes[lane].post(
                FabricLane.WRITE_DATA,
                connection,
                localHandle,
                localAddress,
                length,
                remoteAddress,
                remoteKey,
                immediate & 0xFFFFFFFFL & immediateMask,
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
        if (lane < 0 || lane >= lanes.length) {
            return FAILED; // no lane to record a reason on; the engine only posts on lanes it was given
        }
        return lanes[lane].post(
                FabricLane.READ, connection, localHandle, localAddress, length, remoteAddress, remoteKey, 0, context);
    }

    @Override
    public int poll(int lane, Completions out) {
        out.clear();
        return lanes[lane].poll(out, closed);
    }

    @Override
    public String laneError(int lane) {
        return lane(lane).error;
    }

    @Override
    public boolean recover(int lane) {
        return lane(lane).recover(closed);
    }

    /** Closes every registration, then every lane (endpoint, address vector, queue, domain, fabric). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<AutoCloseable> order = new ArrayList<>();
        order.add(registrations::closeAll);
        for (FabricLane l : lanes) {
            order.add(l::close);
        }
        Closeables.closeAll(order);
    }
}
