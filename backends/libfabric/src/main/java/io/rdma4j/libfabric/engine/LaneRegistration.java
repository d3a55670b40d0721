package io.rdma4j.libfabric.engine;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.MemoryRegion;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * One registration made on every lane's domain, and the backend's table of them by handle. Each lane publishes its
 * region under the handle ({@link FabricLane#addRegion}) for its data path to find.
 */
final class LaneRegistration implements BackendRegistration {
    /** The backend's open registrations and the next handle to give. */
    static final class Table {
        private final AtomicInteger nextHandle = new AtomicInteger();
        private final Map<Integer, LaneRegistration> open = new ConcurrentHashMap<>();

        /**
         * Registers {@code [address, address + length)} on every lane with {@code register}; undoes what it made when a
         * lane fails.
         */
        LaneRegistration register(
                FabricLane[] lanes, long address, long length, Function<Domain, MemoryRegion> register) {
            int handle = nextHandle.getAndIncrement();
            MemoryRegion[] regions = new MemoryRegion[lanes.length];
            try {
                for (int i = 0; i < lanes.length; i++) {
                    regions[i] = lanes[i].addRegion(handle, register);
                }
            } catch (RuntimeException e) {
                List<AutoCloseable> undo = new ArrayList<>();
                for (int i = 0; i < lanes.length; i++) {
                    if (regions[i] != null) {
                        FabricLane l = lanes[i];
                        MemoryRegion r = regions[i];
                        undo.add(() -> l.closeRegion(handle, r));
                    }
                }
                throw Closeables.closeAllInto(e, undo);
            }
            LaneRegistration r = new LaneRegistration(this, lanes, handle, address, length, regions);
            open.put(handle, r);
            return r;
        }

        /** Closes every registration still open. */
        void closeAll() {
            Closeables.closeAll(List.copyOf(open.values()));
        }
    }

    private final Table table;
    private final FabricLane[] lanes;
    private final int handle;
    private final long address;
    private final long length;
    private final MemoryRegion[] regions;
    private volatile boolean open = true;

    private LaneRegistration(
            Table table, FabricLane[] lanes, int handle, long address, long length, MemoryRegion[] regions) {
        this.table = table;
        this.lanes = lanes;
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
        table.open.remove(handle);
        List<AutoCloseable> each = new ArrayList<>(lanes.length);
        for (int i = 0; i < lanes.length; i++) {
            FabricLane l = lanes[i];
            MemoryRegion r = regions[i];
            each.add(() -> l.closeRegion(handle, r));
        }
        Closeables.closeAll(each);
    }
}
