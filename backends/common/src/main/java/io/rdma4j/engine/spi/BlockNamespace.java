package io.rdma4j.engine.spi;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * One namespace of a {@link BlockStore}, addressed in bytes (multiples of {@link #blockSize()}). The futures complete
 * exceptionally with the provider's error, whose message names the command, the target and the status (for NVMe, e.g.
 * {@code LBA Out of Range}); they complete on the provider's threads, so callbacks must not block.
 */
public interface BlockNamespace {
    /** @return the namespace ID */
    long nsid();

    /** @return bytes per logical block */
    int blockSize();

    /** @return size in bytes */
    long capacityBytes();

    /** @return one line naming the target, subsystem and namespace, e.g. {@code tcp://10.0.0.2:4420/nqn... nsid 1} */
    String describe();

    /**
     * Writes {@code data} (a multiple of the block size, in bounds: the caller checked) at {@code byteOffset}. The
     * segment must stay valid until the future completes.
     */
    CompletableFuture<Void> write(long byteOffset, MemorySegment data);

    /** Reads {@code into.byteSize()} bytes at {@code byteOffset} into {@code into}. */
    CompletableFuture<Void> read(long byteOffset, MemorySegment into);

    /**
     * Makes {@code memory} reachable by this namespace's transport, so that reads and writes of segments over its
     * device addresses ({@code MemorySegment.ofAddress(memory.address()).reinterpret(memory.length())}) move it
     * straight between the target and the device, the CPU touching none of it (GPUDirect: NVMe/RDMA keyed SGLs pointing
     * at the NIC's registration of the device memory). Idempotent and cheap once done; the registration lasts until
     * {@link #deregisterDevice} or until the block store closes.
     *
     * @throws io.rdma4j.DeviceRegistrationException when the transport cannot reach device memory (the message says why
     *     and what would make it work); the caller then stages the memory through host memory
     */
    default void registerDevice(DeviceMemory memory) {
        throw new io.rdma4j.DeviceRegistrationException(
                describe() + " moves host memory only: device memory goes through host memory");
    }

    /**
     * Releases what {@link #registerDevice} made for {@code memory}, if anything; called once no I/O on it is in flight
     * and before the memory is freed (the engine calls it when the last handle on the device memory is closed). Nothing
     * to do for a transport that registers no device memory.
     */
    default void deregisterDevice(DeviceMemory memory) {}

    /** Makes completed writes durable (NVMe Flush). */
    CompletableFuture<Void> flush();
}
