package io.rdma4j.engine.internal;

import io.rdma4j.DeviceRegistrationException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferResult;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.zip.CRC32C;

/**
 * Device (GPU) memory in the engine: registration, directly with the backend ({@link EngineBackend#registerDevice}) or,
 * when the backend cannot, through a registered host staging copy of the same size; and the ordering rules around the
 * NIC:
 *
 * <ul>
 *   <li>{@link DeviceMemory#beforeNicRead()} before the first chunk of a write from device memory is posted (and before
 *       its staging copy), and before device memory is published for peers to read;
 *   <li>after a read into device memory completed: the staging copy goes to the device, or
 *       {@link DeviceMemory#afterNicWrite()} runs for a direct registration, before the transfer's future completes;
 *   <li>the same for the range a peer's notification names in published device memory, before the notification is
 *       handed to the user.
 * </ul>
 *
 * Staged memory is copied whole range by range, synchronously, on the thread that starts the write (device to host) or
 * on a virtual thread after the read completed (host to device), never on a progress thread.
 */
final class DeviceBuffers {
    private DeviceBuffers() {}

    /**
     * How the NIC reaches one registered device memory.
     *
     * @param memory the device memory
     * @param staged true when the NIC moves the host staging copy ({@link BufferImpls.Local#segment}) instead
     * @param path one line for {@code toString}: direct, or staged and why
     */
    record Binding(DeviceMemory memory, boolean staged, String path) {}

    /**
     * Registers {@code memory} directly when the backend can, else through a host staging copy; the entry holds one
     * reference.
     *
     * @param released runs once the registration is gone (the buffer closed and no transfer holds it any more)
     */
    static BufferImpls.Local register(
            EngineBackend backend, RegistrationCache registrations, DeviceMemory memory, Runnable released) {
        Objects.requireNonNull(memory, "device memory");
        long length = memory.length();
        if (length <= 0 || memory.address() == 0) {
            throw new InvalidArgumentException("device memory needs a non-NULL address and length > 0: " + memory);
        }
        if (memory.pciAddress() == null) {
            throw new InvalidArgumentException(
                    "device memory " + memory + " has no PCI address: the engine ranks NICs by it");
        }
        MemoryLocation location = MemoryLocation.gpu(memory.pciAddress());
        long t0 = System.nanoTime();
        String why;
        try {
            BackendRegistration r = backend.registerDevice(memory);
            RegistrationCache.Entry e = registrations.adopt(r, System.nanoTime() - t0, released);
            MemorySegment device = MemorySegment.ofAddress(memory.address()).reinterpret(length);
            return new BufferImpls.Local(
                    registrations,
                    device,
                    location,
                    e,
                    false,
                    new Binding(memory, false, "registered directly with " + backend.name()));
        } catch (DeviceRegistrationException e) {
            why = e.getMessage();
        }
        Arena arena = Arena.ofShared();
        BackendRegistration r;
        MemorySegment staging;
        try {
            staging = arena.allocate(length, 4096);
            r = backend.register(staging);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        RegistrationCache.Entry e = registrations.adopt(r, System.nanoTime() - t0, () -> {
            try {
                released.run();
            } finally {
                arena.close();
            }
        });
        return new BufferImpls.Local(
                registrations,
                staging,
                location,
                e,
                false,
                new Binding(memory, true, "staged through registered host memory: " + why));
    }

    /** Checks made with the others before anything is posted. */
    static void check(BufferImpls.Local l, byte op, TransferOptions options) {
        if (l.device != null && !l.device.staged() && options.crc32c()) {
            throw new InvalidArgumentException(
                    "CRC32C of " + l + " needs the CPU to read device memory, which it cannot: write without "
                            + "withCrc32c(), or checksum on the device");
        }
    }

    /**
     * Before posting a write from device memory: the producer's work completes, then (staged) the range is copied to
     * host.
     */
    static void beforeWrite(BufferImpls.Local l, long offset, long length) {
        l.device.memory().beforeNicRead();
        if (l.device.staged() && length > 0) {
            l.device.memory().copyToHost(offset, l.segment.asSlice(offset, length));
        }
    }

    /**
     * Before a volume write from device memory (the block stores move host memory): the producer's work completes;
     * {@link DeviceStaging} then copies each piece to host as it is issued.
     */
    static void beforeVolumeWrite(BufferImpls.Local l) {
        l.device.memory().beforeNicRead();
    }

    /** Before device memory is published: peers may read it from now on. */
    static void beforePublish(BufferImpls.Local l) {
        if (l.device == null) {
            return;
        }
        l.device.memory().beforeNicRead();
        if (l.device.staged()) {
            l.device.memory().copyToHost(0, l.segment);
        }
    }

    /**
     * Wraps a read into device memory so that its future completes only after the bytes are where the device sees them.
     * The caller retained {@code l}'s registration once more before launching; this releases it.
     */
    static Transfer afterRead(
            BufferImpls.Local l, long offset, long length, Transfer inner, RegistrationCache registrations) {
        CompletableFuture<TransferResult> outer = new CompletableFuture<>();
        inner.future().whenComplete((result, failure) -> {
            if (failure != null) {
                registrations.release(l.entry);
                outer.completeExceptionally(
                        failure instanceof CompletionException c && c.getCause() != null ? c.getCause() : failure);
                return;
            }
            // the copy or flush may block on the device: never on the progress thread that completed the read
            Thread.ofVirtual().name("rdma4j-device-" + l.device.memory().kind()).start(() -> {
                try {
                    landed(l, offset, length);
                    outer.complete(result);
                } catch (RuntimeException e) {
                    outer.completeExceptionally(new TransferException(
                            "the read of " + length + " bytes landed, but making them visible to " + l.device.memory()
                                    + " failed: " + e.getMessage(),
                            e));
                } finally {
                    registrations.release(l.entry);
                }
            });
        });
        return new Transfer() {
            @Override
            public CompletableFuture<TransferResult> future() {
                return outer;
            }

            @Override
            public long bytesCompleted() {
                return inner.bytesCompleted();
            }

            @Override
            public long bytesTotal() {
                return inner.bytesTotal();
            }

            @Override
            public boolean cancel() {
                return inner.cancel();
            }

            @Override
            public TransferResult join() {
                try {
                    return outer.join();
                } catch (CompletionException e) {
                    if (e.getCause() instanceof RuntimeException r) {
                        throw r;
                    }
                    throw e;
                }
            }

            @Override
            public String toString() {
                return "read into " + l + ": " + inner;
            }
        };
    }

    /** Bytes a NIC put in {@code [offset, offset + length)}: to the device from staging, or the device's flush. */
    private static void landed(BufferImpls.Local l, long offset, long length) {
        if (l.device.staged()) {
            if (length > 0) {
                l.device.memory().copyFromHost(l.segment.asSlice(offset, length), offset);
            }
        } else {
            l.device.memory().afterNicWrite();
        }
    }

    /**
     * A peer's notification names {@code [offset, offset + length)} of published device memory: makes the range visible
     * to the device first, then checks the CRC when one came. Offset and length came off the wire and are checked here.
     */
    static Notification deliver(
            String peer,
            long tag,
            String bufferName,
            BufferImpls.Local l,
            long offset,
            long length,
            boolean crc,
            int crcValue) {
        boolean inside =
                offset >= 0 && length >= 0 && offset <= l.device.memory().length() - length;
        Notification.Checksum verdict = crc ? Notification.Checksum.MISMATCH : Notification.Checksum.NOT_REQUESTED;
        long actual = -1;
        if (inside && !l.entry.deregistered) {
            landed(l, offset, length);
            if (crc) {
                CRC32C c = new CRC32C();
                if (l.device.staged()) {
                    c.update(l.segment.asSlice(offset, length).asByteBuffer());
                } else {
                    try (Arena a = Arena.ofConfined()) {
                        MemorySegment copy = a.allocate(Math.max(1, length));
                        l.device.memory().copyToHost(offset, copy.asSlice(0, length));
                        c.update(copy.asSlice(0, length).asByteBuffer());
                    }
                }
                actual = c.getValue();
                verdict = actual == Integer.toUnsignedLong(crcValue)
                        ? Notification.Checksum.VERIFIED
                        : Notification.Checksum.MISMATCH;
            }
        }
        long expected = crc ? Integer.toUnsignedLong(crcValue) : -1;
        return new Notification(peer, tag, bufferName, offset, length, verdict, expected, actual);
    }
}
