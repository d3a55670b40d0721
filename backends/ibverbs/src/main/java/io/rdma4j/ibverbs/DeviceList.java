package io.rdma4j.ibverbs;

import io.rdma4j.ClosedException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.ffi.Errno;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The RDMA devices of this machine ({@code ibv_get_device_list}). A machine without any is a normal condition: the list
 * is empty and {@link #get(String)} says how to get a device. Devices are valid while the list is open; a
 * {@link Context} opened from one stays valid after the list is closed.
 */
public final class DeviceList implements AutoCloseable {
    private static final int ENOSYS = 38;
    private static final int ENODEV = 19;

    private final MemorySegment list;
    private final List<Device> devices;
    private volatile boolean closed;

    private DeviceList(MemorySegment list, List<Device> devices) {
        this.list = list;
        this.devices = devices;
    }

    /** Lists the devices; empty (never an error) when the kernel has none. */
    public static DeviceList open() {
        Verbs.ensureAvailable();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment num = a.allocate(ValueLayout.JAVA_INT);
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment list =
                    (MemorySegment) LibIbverbs.ibv_get_device_list.handle().invokeExact(cap, num);
            if (Native.isNull(list)) {
                int errno = Errno.read(cap);
                if (errno == ENOSYS || errno == ENODEV || errno == 0) {
                    return new DeviceList(MemorySegment.NULL, List.of());
                }
                throw new VerbsException("ibv_get_device_list", "", errno);
            }
            int n = num.get(ValueLayout.JAVA_INT, 0);
            MemorySegment arr = list.reinterpret((long) n * ValueLayout.ADDRESS.byteSize());
            List<Device> out = new ArrayList<>(n);
            DeviceList dl = new DeviceList(list, Collections.unmodifiableList(out));
            for (int i = 0; i < n; i++) {
                MemorySegment dev = arr.getAtIndex(ValueLayout.ADDRESS, i);
                String name = Native.string(
                        (MemorySegment) LibIbverbs.ibv_get_device_name.handle().invokeExact(dev));
                long guid = Long.reverseBytes(
                        (long) LibIbverbs.ibv_get_device_guid.handle().invokeExact(dev));
                out.add(new Device(dl, dev, name, guid));
            }
            return dl;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** @return the devices, in the library's order */
    public List<Device> devices() {
        ensureOpen();
        return devices;
    }

    public boolean isEmpty() {
        return devices.isEmpty();
    }

    /**
     * The device named {@code name}, or the first one when {@code name} is null.
     *
     * @throws Rdma4jException naming the devices present, or how to create one when there is none
     */
    public Device get(String name) {
        ensureOpen();
        if (devices.isEmpty()) {
            throw new Rdma4jException(
                    "no RDMA device on this machine (ibv_get_device_list found none)"
                            + (name == null ? "" : " so '" + name + "' cannot be opened")
                            + ": install the driver for your NIC, or create a Soft-RoCE device: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev IFACE");
        }
        if (name == null) {
            return devices.get(0);
        }
        for (Device d : devices) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw new Rdma4jException("no RDMA device named '" + name + "'; this machine has "
                + devices.stream().map(Device::name).toList());
    }

    void ensureOpen() {
        if (closed) {
            throw new ClosedException("DeviceList");
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (!Native.isNull(list)) {
            try {
                LibIbverbs.ibv_free_device_list.handle().invokeExact(list);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
    }

    /** One RDMA device of a {@link DeviceList}. */
    public static final class Device {
        private final DeviceList list;
        private final MemorySegment device;
        private final String name;
        private final long guid;

        Device(DeviceList list, MemorySegment device, String name, long guid) {
            this.list = list;
            this.device = device;
            this.name = name;
            this.guid = guid;
        }

        /** @return the kernel name, e.g. {@code rxe0} or {@code mlx5_0} */
        public String name() {
            return name;
        }

        /** @return the node GUID in host order */
        public long guid() {
            return guid;
        }

        /** Opens the device ({@code ibv_open_device}). */
        public Context open() {
            list.ensureOpen();
            return Context.open(device, name);
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
