package io.rdma4j.nvmeof.rdma;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_LOCAL_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_WRITE;

import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.nvmeof.NvmeConnectionException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the NVMe/RDMA queues of one controller share: the protection domain their queue pairs live in and the
 * registrations of the caller's buffers, made once per buffer and reused by every command and queue that moves its
 * data. A registration whose memory was freed (its arena closed) is dropped and made again for the new memory. Heap
 * buffers, which the NIC cannot reach, go through registered bounce buffers kept in a pool by power-of-two size and
 * reused, so a command on heap memory registers nothing once the pool holds a buffer of its size.
 */
public final class RdmaResources implements AutoCloseable {
    /**
     * What the target may do with registered buffers: RDMA WRITE into reads' buffers, RDMA READ from writes' buffers.
     */
    static final int ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

    private Context context;
    private ProtectionDomain pd;
    /** Registrations by start address; the caller's buffers. */
    private final TreeMap<Long, MemoryRegion> regions = new TreeMap<>();

    private final List<MemoryRegion> retired = new ArrayList<>();
    /** Registrations of device memory, by the memory; its reads and writes name them in keyed SGLs. */
    private final Map<DeviceMemory, MemoryRegion> devices = new java.util.IdentityHashMap<>();
    /** The live registrations of {@link #devices}, read without the lock by every command ({@link #deviceRegion}). */
    private volatile MemoryRegion[] deviceRegions = new MemoryRegion[0];

    private boolean closed;

    /** A registered bounce buffer of {@code 1 << sizeClass} bytes. */
    record Bounce(MemorySegment segment, MemoryRegion mr, int sizeClass) {}

    /** Bytes of idle bounce buffers the pool keeps registered; more are deregistered when returned. */
    static final long BOUNCE_POOL_BYTES = 64L << 20;

    /** Idle bounce buffers by size class (log2 of their size, 12 to 31). */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Bounce>[] bounces = new ArrayDeque[32];

    private long bounceBytes;
    private long bouncesRegistered;

    /**
     * The protection domain on {@code ctx}, allocated by the first queue; every queue of a controller uses one device.
     */
    synchronized ProtectionDomain pd(Context ctx) {
        if (closed) {
            throw new NvmeConnectionException("the controller's RDMA resources were released: reconnect");
        }
        if (pd == null) {
            context = ctx;
            pd = ctx.allocPd();
        } else if (ctx != context) {
            throw new NvmeConnectionException(
                    "RDMA-CM bound this queue to device " + ctx.deviceName() + " but the controller's other queues use "
                            + context.deviceName() + ": one controller's queues must share a device");
        }
        return pd;
    }

    /**
     * A registration covering all of {@code segment} (native), made now or reused. The memory must stay alive until the
     * commands using it complete.
     */
    synchronized MemoryRegion region(MemorySegment segment) {
        if (closed || pd == null) {
            throw new NvmeConnectionException("the controller's RDMA resources were released: reconnect");
        }
        long start = segment.address();
        long end = start + segment.byteSize();
        Map.Entry<Long, MemoryRegion> e = regions.floorEntry(start);
        while (e != null) {
            MemoryRegion mr = e.getValue();
            MemorySegment reg = mr.segment();
            if (mr.isClosed() || !reg.scope().isAlive()) {
                regions.remove(e.getKey());
                retire(mr);
            } else if (mr.address() + mr.length() >= end && reg.scope().equals(segment.scope())) {
                return mr;
            }
            e = regions.lowerEntry(e.getKey());
        }
        MemoryRegion mr = pd.register(segment, ACCESS);
        MemoryRegion old = regions.put(start, mr);
        if (old != null) {
            retired.add(old); // commands in flight may still name it: released with the controller
        }
        return mr;
    }

    private void retire(MemoryRegion mr) {
        try {
            mr.close();
        } catch (RuntimeException ex) {
            retired.add(mr);
        }
    }

    /**
     * A registered bounce buffer of at least {@code bytes} (at least 4 KiB, a power of two), from the pool or made now.
     * Give it back with {@link #give} once the command using it completed, or {@link #drop} it when the command may
     * still be in the NIC's hands.
     */
    synchronized Bounce take(long bytes) {
        if (closed || pd == null) {
            throw new NvmeConnectionException("the controller's RDMA resources were released: reconnect");
        }
        int c = Math.max(12, 64 - Long.numberOfLeadingZeros(bytes - 1));
        ArrayDeque<Bounce> idle = bounces[c];
        Bounce b = idle == null ? null : idle.poll();
        if (b != null) {
            bounceBytes -= 1L << c;
            return b;
        }
        // freed by the GC once the bounce buffer is dropped and its registration closed
        MemorySegment seg = Arena.ofAuto().allocate(1L << c, 4096);
        bouncesRegistered++;
        return new Bounce(seg, pd.register(seg, ACCESS), c);
    }

    /** A bounce buffer whose command completed: kept for the next command of its size, or deregistered. */
    synchronized void give(Bounce b) {
        if (closed || bounceBytes + (1L << b.sizeClass()) > BOUNCE_POOL_BYTES) {
            drop(b);
            return;
        }
        if (bounces[b.sizeClass()] == null) {
            bounces[b.sizeClass()] = new ArrayDeque<>();
        }
        bounces[b.sizeClass()].push(b);
        bounceBytes += 1L << b.sizeClass();
    }

    /** Deregisters a bounce buffer (a failed command's: the NIC may not touch it once it is deregistered). */
    void drop(Bounce b) {
        try {
            b.mr().close();
        } catch (RuntimeException ignored) {
            // deregistering a bounce buffer of a failed queue: the protection domain goes with the controller
        }
    }

    /**
     * Registers device memory with the controller's NIC, once: as a dma-buf, else by its device address (a peer-memory
     * client such as nvidia_peermem pins it). Commands on segments over its device addresses then point keyed SGLs
     * straight at it ({@link #deviceRegion}).
     *
     * @throws io.rdma4j.DeviceRegistrationException naming both paths and the fix, when neither works
     */
    public synchronized void registerDevice(DeviceMemory memory) {
        if (closed || pd == null) {
            throw new NvmeConnectionException("the controller's RDMA resources were released: reconnect");
        }
        MemoryRegion mr = devices.get(memory);
        if (mr == null || mr.isClosed()) {
            devices.put(memory, pd.registerDevice(memory, ACCESS));
            deviceRegions = devices.values().toArray(new MemoryRegion[0]);
        }
    }

    /**
     * Deregisters device memory that {@link #registerDevice} registered: the NIC unpins it, and commands over its
     * addresses no longer point at it. Call it once no command on it is in flight, and before the memory is freed (a
     * new allocation at the same addresses would otherwise match the old registration).
     *
     * @return whether it was registered
     */
    public synchronized boolean deregisterDevice(DeviceMemory memory) {
        MemoryRegion mr = devices.remove(memory);
        if (mr == null) {
            return false;
        }
        deviceRegions = devices.values().toArray(new MemoryRegion[0]);
        if (!closed && !mr.isClosed()) {
            mr.close();
        }
        return true;
    }

    /** @return how many device memories are registered now */
    public synchronized int deviceRegistrations() {
        return devices.size();
    }

    /**
     * @return the registration of device memory covering {@code [address, address + length)}, or null when that range
     *     is not registered device memory. Lock-free: the queues' threads call it for every command.
     */
    MemoryRegion deviceRegion(long address, long length) {
        for (MemoryRegion mr : deviceRegions) {
            if (!mr.isClosed() && address >= mr.address() && address + length <= mr.address() + mr.length()) {
                return mr;
            }
        }
        return null;
    }

    /** @return how many bounce buffers were registered so far (reused ones count once) */
    public synchronized long bounceRegistrations() {
        return bouncesRegistered;
    }

    /** @return how many of the caller's buffers are registered now */
    public synchronized int registrations() {
        return regions.size();
    }

    /** Deregisters every buffer and frees the protection domain; close the queues first. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        regions.clear();
        retired.clear();
        devices.clear();
        deviceRegions = new MemoryRegion[0];
        java.util.Arrays.fill(bounces, null); // their registrations close with the protection domain
        if (pd != null) {
            pd.close(); // closes the registrations made on it
        }
    }
}
