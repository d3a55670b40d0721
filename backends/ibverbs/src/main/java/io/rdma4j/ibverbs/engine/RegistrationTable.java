package io.rdma4j.ibverbs.engine;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_LOCAL_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_WRITE;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.ProtectionDomain;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The backend's registrations: one memory region per device for each, indexed by handle. Copy-on-write: control threads
 * add and remove under this table's lock, progress threads look handles up without one (a slot is null once its
 * registration closed).
 */
final class RegistrationTable {
    static final int ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

    private final List<VerbsDevice> devices;
    private final int[] deviceOfLane;
    private volatile Registration[] table = new Registration[0];

    /**
     * @param devices the backend's devices, index i at position i
     * @param deviceOfLane lane -> index of its device, for {@link BackendRegistration#remoteKey(int)}
     */
    RegistrationTable(List<VerbsDevice> devices, int[] deviceOfLane) {
        this.devices = devices;
        this.deviceOfLane = deviceOfLane;
    }

    /** Registers one range on every device with {@code register}; undoes what it made when a device fails. */
    synchronized BackendRegistration add(long address, long length, Function<ProtectionDomain, MemoryRegion> register) {
        MemoryRegion[] mrs = new MemoryRegion[devices.size()];
        try {
            for (VerbsDevice d : devices) {
                mrs[d.index] = register.apply(d.pd);
            }
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, mrs);
        }
        Registration[] t = table;
        int handle = 0;
        while (handle < t.length && t[handle] != null) {
            handle++;
        }
        Registration r = new Registration(handle, address, length, mrs);
        Registration[] next = Arrays.copyOf(t, Math.max(t.length, handle + 1));
        next[handle] = r;
        table = next;
        return r;
    }

    /**
     * @return the memory region of {@code handle} on {@code device} covering {@code [address, address + length)}, or
     *     null when there is none; {@link #whyNot} then says why
     */
    MemoryRegion find(int handle, int device, long address, long length) {
        Registration[] t = table;
        Registration r = handle >= 0 && handle < t.length ? t[handle] : null;
        if (r == null || r.closed || length < 0 || address < r.address || address - r.address > r.length - length) {
            return null;
        }
        return r.mrs[device];
    }

    /** Why {@link #find} found nothing for these arguments (off the data path's fast branch: it allocates). */
    String whyNot(int handle, long address, long length) {
        Registration[] t = table;
        Registration r = handle >= 0 && handle < t.length ? t[handle] : null;
        if (r == null || r.closed) {
            return "no registration with handle " + handle + " (never made, or closed)";
        }
        return "local range [0x" + Long.toHexString(address) + ", +" + length + ") is outside registration " + handle
                + " ([0x" + Long.toHexString(r.address) + ", +" + r.length + "))";
    }

    /** Closes every registration still open. */
    void closeAll() {
        Closeables.closeAll(table);
    }

    private final class Registration implements BackendRegistration {
        final int handle;
        final long address;
        final long length;
        final MemoryRegion[] mrs;
        volatile boolean closed;

        Registration(int handle, long address, long length, MemoryRegion[] mrs) {
            this.handle = handle;
            this.address = address;
            this.length = length;
            this.mrs = mrs;
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
            return address;
        }

        @Override
        public long remoteKey(int lane) {
            if (lane < 0 || lane >= deviceOfLane.length) {
                throw new IndexOutOfBoundsException("lane " + lane + " is outside [0, " + deviceOfLane.length + ")");
            }
            return Integer.toUnsignedLong(mrs[deviceOfLane[lane]].rkey());
        }

        @Override
        public void close() {
            synchronized (RegistrationTable.this) {
                if (closed) {
                    return;
                }
                closed = true;
                // unpublish first: a post racing with the close finds no registration instead of a closed region
                Registration[] next = table.clone();
                next[handle] = null;
                table = next;
                Closeables.closeAll(mrs);
            }
        }
    }
}
