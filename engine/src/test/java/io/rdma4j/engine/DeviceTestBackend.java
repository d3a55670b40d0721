package io.rdma4j.engine;

import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.ForwardingEngineBackend;
import io.rdma4j.engine.spi.LaneDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps a real backend for the device-memory tests: records the sequence number of the first write and first read it
 * posts (on the sequence a {@link RecordingDeviceMemory} uses), and optionally (a) gives its lanes the PCI addresses of
 * NICs in a captured topology, so the engine ranks real lanes as that machine would, and (b) registers "device" memory
 * directly by registering the host memory behind a {@link RecordingDeviceMemory}, standing in for a GPUDirect-capable
 * backend so the engine's direct path runs with real bytes. Everything else goes to the real backend.
 */
public final class DeviceTestBackend extends ForwardingEngineBackend {
    private final AtomicLong sequence;
    private final List<String> lanePci;
    private final boolean direct;
    final AtomicLong firstWritePost = new AtomicLong(-1);
    final AtomicLong firstReadPost = new AtomicLong(-1);

    public DeviceTestBackend(EngineBackend inner, AtomicLong sequence, List<String> lanePci, boolean direct) {
        super(inner);
        this.sequence = sequence;
        this.lanePci = lanePci;
        this.direct = direct;
    }

    @Override
    public List<LaneDescriptor> lanes() {
        if (lanePci == null) {
            return inner.lanes();
        }
        List<LaneDescriptor> out = new ArrayList<>();
        for (LaneDescriptor d : inner.lanes()) {
            out.add(new LaneDescriptor(
                    d.index(),
                    d.device(),
                    lanePci.get(d.index() % lanePci.size()),
                    d.numaNode(),
                    d.bandwidthGbps(),
                    d.maxMessageBytes()));
        }
        return out;
    }

    @Override
    public BackendRegistration registerDevice(DeviceMemory memory) {
        if (!direct) {
            return inner.registerDevice(memory);
        }
        return inner.register(((RecordingDeviceMemory) memory).memory);
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
        firstWritePost.compareAndSet(-1, sequence.incrementAndGet());
        return inner.postWrite(lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
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
        firstWritePost.compareAndSet(-1, sequence.incrementAndGet());
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
        firstReadPost.compareAndSet(-1, sequence.incrementAndGet());
        return inner.postRead(lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }
}
