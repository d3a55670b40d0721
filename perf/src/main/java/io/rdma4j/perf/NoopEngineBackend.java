package io.rdma4j.perf;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.engine.spi.LaneDescriptor;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A backend that moves nothing: every post completes at the next poll. Selected with {@code backend("noop")} (lowest
 * priority, never chosen by {@code auto}); it exists to measure the engine's own cost per chunk (planning, dispatch,
 * slot bookkeeping, completion handling) without a transport underneath.
 */
public final class NoopEngineBackend implements EngineBackend {
    /** The ServiceLoader entry. */
    public static final class Provider implements EngineBackendProvider {
        @Override
        public String name() {
            return "noop";
        }

        @Override
        public int priority() {
            return Integer.MIN_VALUE;
        }

        @Override
        public boolean isAvailable() {
            return true;
        }

        @Override
        public String unavailabilityCause() {
            return null;
        }

        @Override
        public EngineBackend open(BackendConfig config) {
            return new NoopEngineBackend(config.lanesPerDevice(), config.queueDepth());
        }
    }

    private final List<LaneDescriptor> lanes = new ArrayList<>();
    /**
     * Per lane: a ring of posted contexts, completed at the next poll. Single-threaded per lane like a real backend.
     */
    private final long[][] ring;

    private final int[] head;
    private final int[] tail;
    private final AtomicInteger handles = new AtomicInteger();

    NoopEngineBackend(int laneCount, int depth) {
        ring = new long[laneCount][];
        head = new int[laneCount];
        tail = new int[laneCount];
        for (int i = 0; i < laneCount; i++) {
            lanes.add(new LaneDescriptor(i, "noop", null, 0, 100, Long.MAX_VALUE));
            ring[i] = new long[Integer.highestOneBit(Math.max(2, depth * 2 + 2)) * 2];
        }
    }

    @Override
    public String name() {
        return "noop";
    }

    @Override
    public String provider() {
        return "noop";
    }

    @Override
    public String description() {
        return "no-op backend (" + lanes.size() + " lanes, moves nothing)";
    }

    @Override
    public List<LaneDescriptor> lanes() {
        return lanes;
    }

    @Override
    public int immediateBytes() {
        return 4;
    }

    @Override
    public BackendRegistration register(MemorySegment segment) {
        int h = handles.getAndIncrement();
        return new BackendRegistration() {
            @Override
            public int handle() {
                return h;
            }

            @Override
            public long address() {
                return segment.address();
            }

            @Override
            public long length() {
                return segment.byteSize();
            }

            @Override
            public long remoteAddress(int lane) {
                return segment.address();
            }

            @Override
            public long remoteKey(int lane) {
                return h;
            }

            @Override
            public void close() {}
        };
    }

    @Override
    public int prepareConnection(int lane) {
        return 0;
    }

    @Override
    public byte[] endpointInfo(int lane, int connection) {
        return new byte[] {(byte) lane};
    }

    @Override
    public void connect(int lane, int connection, byte[] remoteEndpointInfo) {}

    @Override
    public void disconnect(int lane, int connection) {}

    private int post(int lane, long context) {
        long[] r = ring[lane];
        if (tail[lane] - head[lane] == r.length) {
            return BACK_PRESSURED;
        }
        r[tail[lane]++ & (r.length - 1)] = context;
        return OK;
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
        return post(lane, context);
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
        return post(lane, context);
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
        return post(lane, context);
    }

    @Override
    public int poll(int lane, Completions out) {
        out.clear();
        long[] r = ring[lane];
        while (head[lane] != tail[lane] && out.add(Completions.LOCAL, r[head[lane] & (r.length - 1)], 0)) {
            head[lane]++;
        }
        return out.count;
    }

    @Override
    public String laneError(int lane) {
        return null;
    }

    @Override
    public boolean recover(int lane) {
        return true;
    }

    @Override
    public void close() {}
}
