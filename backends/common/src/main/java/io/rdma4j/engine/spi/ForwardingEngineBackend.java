package io.rdma4j.engine.spi;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A backend that hands every call to a real one. Wrappers given to the engine's {@code backendWrapper} (a fault
 * injector in a test or a soak, a recorder of call order) extend it and override only the calls they change.
 */
public abstract class ForwardingEngineBackend implements EngineBackend {
    /** The real backend. */
    protected final EngineBackend inner;

    /** @param inner the real backend every call goes to */
    protected ForwardingEngineBackend(EngineBackend inner) {
        this.inner = inner;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public String provider() {
        return inner.provider();
    }

    @Override
    public String description() {
        return inner.description();
    }

    @Override
    public List<LaneDescriptor> lanes() {
        return inner.lanes();
    }

    @Override
    public int immediateBytes() {
        return inner.immediateBytes();
    }

    @Override
    public BackendRegistration register(MemorySegment segment) {
        return inner.register(segment);
    }

    @Override
    public BackendRegistration registerDevice(DeviceMemory memory) {
        return inner.registerDevice(memory);
    }

    @Override
    public int prepareConnection(int lane) {
        return inner.prepareConnection(lane);
    }

    @Override
    public byte[] endpointInfo(int lane, int connection) {
        return inner.endpointInfo(lane, connection);
    }

    @Override
    public void connect(int lane, int connection, byte[] remoteEndpointInfo) {
        inner.connect(lane, connection, remoteEndpointInfo);
    }

    @Override
    public void disconnect(int lane, int connection) {
        inner.disconnect(lane, connection);
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
        return inner.postWrite(lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }

    @Override
    public int writeVectorLimit(int lane) {
        return inner.writeVectorLimit(lane);
    }

    @Override
    public long writeVectorBytes(int lane) {
        return inner.writeVectorBytes(lane);
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
        return inner.postWriteVector(
                lane, connection, localHandle, localAddresses, remoteAddresses, lengths, count, remoteKey, context);
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
        return inner.postWriteImmediate(
                lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, immediate, context);
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
        return inner.postRead(lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }

    @Override
    public int poll(int lane, Completions out) {
        return inner.poll(lane, out);
    }

    @Override
    public IdleWait idleWait(int[] lanes) {
        return inner.idleWait(lanes);
    }

    @Override
    public String laneError(int lane) {
        return inner.laneError(lane);
    }

    @Override
    public boolean recover(int lane) {
        return inner.recover(lane);
    }

    @Override
    public void close() {
        inner.close();
    }
}
