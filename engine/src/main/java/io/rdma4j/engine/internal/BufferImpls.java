package io.rdma4j.engine.internal;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.Peer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.rendezvous.BufferInfo;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/** The engine's implementations of the buffer and peer handles. */
final class BufferImpls {
    private BufferImpls() {}

    static final class Local implements LocalBuffer {
        /** The engine's registration cache: holds this buffer's reference, and tells engines apart. */
        final RegistrationCache registrations;

        final MemorySegment segment;
        final MemoryLocation location;
        final RegistrationCache.Entry entry;
        final boolean reused;
        final AtomicBoolean closed = new AtomicBoolean();
        /**
         * Set for device memory: how the NIC reaches it (directly, or through {@link #segment} as a host staging copy).
         */
        final DeviceBuffers.Binding device;

        Local(
                RegistrationCache registrations,
                MemorySegment segment,
                MemoryLocation location,
                RegistrationCache.Entry entry,
                boolean reused) {
            this(registrations, segment, location, entry, reused, null);
        }

        Local(
                RegistrationCache registrations,
                MemorySegment segment,
                MemoryLocation location,
                RegistrationCache.Entry entry,
                boolean reused,
                DeviceBuffers.Binding device) {
            this.registrations = registrations;
            this.segment = segment;
            this.location = location;
            this.entry = entry;
            this.reused = reused;
            this.device = device;
        }

        @Override
        public MemorySegment segment() {
            if (device != null) {
                throw new UnsupportedOperationException(
                        this + " is device memory, which the CPU cannot address: use device() and the device's "
                                + "own copies (GpuBuffer.copyToHost/copyFromHost)");
            }
            return segment;
        }

        @Override
        public io.rdma4j.engine.spi.DeviceMemory device() {
            return device == null ? null : device.memory();
        }

        @Override
        public long length() {
            return segment.byteSize();
        }

        @Override
        public MemoryLocation location() {
            return location;
        }

        @Override
        public long registrationNanos() {
            return reused ? 0 : entry.registrationNanos();
        }

        @Override
        public boolean reused() {
            return reused;
        }

        boolean isClosed() {
            return closed.get();
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                registrations.release(entry);
            }
        }

        @Override
        public String toString() {
            if (device != null) {
                return "LocalBuffer[" + segment.byteSize() + " bytes of "
                        + device.memory().kind() + " memory at 0x"
                        + Long.toHexString(device.memory().address()) + ", " + location + ", " + device.path() + "]";
            }
            return "LocalBuffer[" + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address()) + ", "
                    + location + "]";
        }
    }

    static final class PeerImpl implements Peer {
        final Membership membership;
        final PeerLink link;

        PeerImpl(Membership membership, PeerLink link) {
            this.membership = membership;
            this.link = link;
        }

        @Override
        public String name() {
            return link.name;
        }

        @Override
        public long generation() {
            return link.generation;
        }

        @Override
        public RemoteBuffer buffer(String name) {
            return membership.lookup(this, name);
        }

        @Override
        public String toString() {
            return "Peer[" + link.name + "]";
        }
    }

    static final class Remote implements RemoteBuffer {
        final PeerImpl peer;
        final BufferInfo info;
        final String shortName;
        final MemoryLocation location;
        /** Indexed by the owner's lane: address of byte 0 and key, or key -1... presence in {@link #has}. */
        final long[] address;

        final long[] key;
        final boolean[] has;

        Remote(PeerImpl peer, String shortName, BufferInfo info) {
            this.peer = peer;
            this.shortName = shortName;
            this.info = info;
            int max = 0;
            for (var k : info.lanes()) {
                max = Math.max(max, k.lane() + 1);
            }
            address = new long[max];
            key = new long[max];
            has = new boolean[max];
            for (var k : info.lanes()) {
                address[k.lane()] = k.address();
                key[k.lane()] = k.key();
                has[k.lane()] = true;
            }
            var loc = info.locality();
            String gpu = loc.pciAddress() == null || loc.pciAddress().isEmpty() ? null : loc.pciAddress();
            this.location = new MemoryLocation(Math.max(-1, loc.numaNode()), gpu);
        }

        boolean hasLane(int lane) {
            return lane >= 0 && lane < has.length && has[lane];
        }

        @Override
        public String name() {
            return shortName;
        }

        @Override
        public Peer peer() {
            return peer;
        }

        @Override
        public long length() {
            return info.length();
        }

        @Override
        public MemoryLocation location() {
            return location;
        }

        @Override
        public long generation() {
            return info.generation();
        }

        @Override
        public String toString() {
            return "RemoteBuffer[" + peer.name() + "/" + shortName + ", " + info.length() + " bytes]";
        }
    }
}
