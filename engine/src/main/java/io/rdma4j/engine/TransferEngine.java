package io.rdma4j.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.engine.internal.EngineConfig;
import io.rdma4j.engine.internal.EngineCore;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

// One unit, over 600 lines: this file is the user's whole contract, and two thirds of it is the Javadoc of each call
// (what it throws, when it completes). The Builder is nested so that TransferEngine.builder() reads as one type; the
// engine itself lives in internal.EngineCore and the classes it delegates to.
/**
 * Moves bytes one-sided between registered buffers of engines: {@code engine.write(src, peer.buffer("weights"))}.
 * Transfers are planned over the lanes (NIC endpoints or queue pairs) closest to the memory on both sides, striped in
 * chunks when large, completed with a future, and safe when lanes or peers fail.
 *
 * <p>One unit: the public interface and its nested {@link Builder}, which callers name as
 * {@code TransferEngine.Builder}; moving the builder out would break them.
 *
 * <pre>{@code
 * try (TransferEngine engine = TransferEngine.builder().name("trainer").build()) {
 *     LocalBuffer src = engine.register(segment);
 *     RemoteBuffer dst = engine.peer("rollout-0").buffer("weights");
 *     engine.write(src, dst, TransferOptions.tag(42)).join();
 * }
 * }</pre>
 */
public interface TransferEngine extends AutoCloseable {
    /** {@return a builder with defaults: the best available backend, embedded rendezvous, 1 MiB chunks} */
    static Builder builder() {
        return new Builder();
    }

    /** {@return this engine's peer name} */
    String name();

    /** {@return one line on the backend and lanes in use} */
    String description();

    /**
     * Registers host memory (NUMA node unknown) and returns a local buffer; reuses a cached registration that contains
     * it.
     *
     * @param segment memory to register; it must stay alive until the buffer is closed
     * @return the buffer, usable as a source or target and for publishing
     * @throws io.rdma4j.InvalidArgumentException when {@code segment} is heap memory or empty
     * @throws io.rdma4j.ClosedException when this engine or the segment's arena is closed
     * @throws io.rdma4j.NativeCallException when the backend cannot register the memory (the message names the native
     *     error, e.g. a locked-memory limit to raise)
     */
    LocalBuffer register(MemorySegment segment);

    /**
     * Registers memory at a known location (drives lane ranking).
     *
     * @param segment memory to register; it must stay alive until the buffer is closed
     * @param location where the memory lives (NUMA node or GPU), for ranking lanes
     * @return the buffer, usable as a source or target and for publishing
     * @throws io.rdma4j.InvalidArgumentException when {@code segment} is heap memory or empty
     * @throws io.rdma4j.ClosedException when this engine or the segment's arena is closed
     * @throws io.rdma4j.NativeCallException when the backend cannot register the memory (the message names the native
     *     error, e.g. a locked-memory limit to raise)
     */
    LocalBuffer register(MemorySegment segment, MemoryLocation location);

    /**
     * Registers device (GPU) memory, e.g. rdma4j-cuda's {@code GpuBuffer}. The buffer's location is the device's PCI
     * address, so transfers use the NICs nearest that GPU. The backend registers it directly (GPUDirect RDMA) where it
     * can; otherwise the engine stages it through a registered host copy of the same size (device to host before a
     * write is posted, host to device after a read completed, before its future completes). Writes from it wait for the
     * device's producing work first; reads into it and notifications naming it complete only once the device sees the
     * bytes. Publishing it makes its current contents readable by peers (publish again after the device changed it when
     * the engine stages it); a peer's write into it reaches the device when its notification arrives.
     *
     * @param memory the device memory; it must stay allocated until the buffer is closed
     * @return the buffer, located at the device
     * @throws io.rdma4j.InvalidArgumentException when the memory has no address, no length or no PCI address
     * @throws io.rdma4j.ClosedException when this engine is closed
     * @throws io.rdma4j.NativeCallException when the backend can register neither the device memory nor a host staging
     *     copy of it
     */
    LocalBuffer register(DeviceMemory memory);

    /**
     * Makes {@code buffer} reachable by peers under {@code name}.
     *
     * @param name the name peers ask for: {@code [A-Za-z0-9][A-Za-z0-9._:@-]{0,62}}, as for engine names
     * @param buffer a buffer registered with this engine
     * @param access the peers that may receive its keys
     * @throws io.rdma4j.InvalidArgumentException when {@code name} breaks the naming rule or {@code buffer} was not
     *     registered with this engine
     * @throws io.rdma4j.ClosedException when this engine, {@code buffer} or its memory's arena is closed
     * @throws io.rdma4j.rendezvous.RendezvousException when the directory cannot be updated
     */
    void publish(String name, LocalBuffer buffer, Access access);

    /**
     * Withdraws a published buffer.
     *
     * @param name the name it was published under
     * @throws UnknownBufferException when no buffer is published under {@code name}
     * @throws io.rdma4j.ClosedException when this engine is closed
     * @throws io.rdma4j.rendezvous.RendezvousException when the directory cannot be updated
     */
    void unpublish(String name);

    /**
     * Resolves a peer through the rendezvous.
     *
     * @param name the peer's engine name
     * @return the peer, through which its published buffers are found
     * @throws UnknownPeerException when no peer of that name is announced
     * @throws io.rdma4j.InvalidArgumentException when {@code name} is empty
     * @throws io.rdma4j.ClosedException when this engine is closed
     */
    Peer peer(String name);

    /**
     * Writes all of {@code source} to the start of {@code target}.
     *
     * @param source the registered local buffer to send from
     * @param target the peer's published buffer, at least as long as {@code source}
     * @return the running transfer, whose future completes once every chunk completed, or fails with a
     *     {@link TransferException} subclass as {@link Transfer} describes
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer write(LocalBuffer source, RemoteBuffer target) {
        return write(source, 0, target, 0, source.length(), TransferOptions.DEFAULT);
    }

    /**
     * Writes all of {@code source} to the start of {@code target} with options.
     *
     * @param source the registered local buffer to send from
     * @param target the peer's published buffer, at least as long as {@code source}
     * @param options deadline, notification tag and checksum
     * @return the running transfer, whose future completes once every chunk completed (with a checksum: once the target
     *     verified it), or fails with {@link TransferTimeoutException} when the deadline passed first,
     *     {@link ChecksumMismatchException} when the bytes that landed differ from those sent,
     *     {@link PeerLostException} or {@link LaneFailureException}
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer write(LocalBuffer source, RemoteBuffer target, TransferOptions options) {
        return write(source, 0, target, 0, source.length(), options);
    }

    /**
     * Writes all of {@code source} to the start of the buffer {@code target} that {@code peer} published:
     * {@code engine.write(src, "rollout-0", "weights")}. Resolves the peer and the buffer through the directory on
     * every call; resolve them once ({@link #peer}, {@link Peer#buffer}) to write the same target repeatedly.
     *
     * @param source the registered local buffer to send from
     * @param peer the peer's engine name
     * @param target the name the peer published its buffer under, at least as long as {@code source}
     * @return the running transfer, as {@link #write(LocalBuffer, RemoteBuffer)} returns it
     * @throws UnknownPeerException when no peer of that name is announced
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when {@code target} breaks the naming rule
     * @throws UnknownPeerException when no peer of that name is announced
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer write(LocalBuffer source, String peer, String target) {
        return write(source, peer(peer), target, TransferOptions.DEFAULT);
    }

    /**
     * Writes all of {@code source} to the start of the buffer {@code target} that {@code peer} published, with options.
     *
     * @param source the registered local buffer to send from
     * @param peer the peer's engine name
     * @param target the name the peer published its buffer under, at least as long as {@code source}
     * @param options deadline, notification tag and checksum
     * @return the running transfer, as {@link #write(LocalBuffer, RemoteBuffer, TransferOptions)} returns it
     * @throws UnknownPeerException when no peer of that name is announced
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when {@code target} breaks the naming rule
     * @throws UnknownPeerException when no peer of that name is announced
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer write(LocalBuffer source, String peer, String target, TransferOptions options) {
        return write(source, peer(peer), target, options);
    }

    /**
     * Writes all of {@code source} to the start of the buffer {@code target} that {@code peer} published.
     *
     * @param source the registered local buffer to send from
     * @param peer a peer this engine resolved
     * @param target the name the peer published its buffer under, at least as long as {@code source}
     * @return the running transfer, as {@link #write(LocalBuffer, RemoteBuffer)} returns it
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when {@code target} breaks the naming rule
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer write(LocalBuffer source, Peer peer, String target) {
        return write(source, peer, target, TransferOptions.DEFAULT);
    }

    /**
     * Writes all of {@code source} to the start of the buffer {@code target} that {@code peer} published, with options.
     *
     * @param source the registered local buffer to send from
     * @param peer a peer this engine resolved
     * @param target the name the peer published its buffer under, at least as long as {@code source}
     * @param options deadline, notification tag and checksum
     * @return the running transfer, as {@link #write(LocalBuffer, RemoteBuffer, TransferOptions)} returns it
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when {@code target} breaks the naming rule
     * @throws UnknownBufferException when the peer published no buffer of that name (or not for us)
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer write(LocalBuffer source, Peer peer, String target, TransferOptions options) {
        Objects.requireNonNull(peer, "peer is null: resolve it with engine.peer(name)");
        return write(source, 0, peer.buffer(target), 0, source.length(), options);
    }

    /**
     * Writes {@code length} bytes from {@code source} at {@code sourceOffset} to {@code target} at
     * {@code targetOffset}. Bad arguments throw before anything is posted.
     *
     * @param source the registered local buffer to send from
     * @param sourceOffset first byte of {@code source} to send
     * @param target the peer's published buffer
     * @param targetOffset where in {@code target} the first byte lands
     * @param length bytes to move
     * @param options deadline, notification tag and checksum
     * @return the running transfer, whose future completes once every chunk completed (with a checksum: once the target
     *     verified it), or fails with {@link TransferTimeoutException} when the deadline passed first,
     *     {@link ChecksumMismatchException} when the bytes that landed differ from those sent,
     *     {@link PeerLostException} or {@link LaneFailureException}
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine, or the options ask a CRC32C of device memory the CPU cannot
     *     read; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    Transfer write(
            LocalBuffer source,
            long sourceOffset,
            RemoteBuffer target,
            long targetOffset,
            long length,
            TransferOptions options);

    /**
     * Reads all of {@code source} into the start of {@code target}.
     *
     * @param target the registered local buffer the bytes land in
     * @param source the peer's published buffer, at least as long as {@code target}
     * @return the running transfer, whose future completes once every chunk completed, or fails with
     *     {@link TransferTimeoutException} when the deadline passed first, {@link PeerLostException} or
     *     {@link LaneFailureException}
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code target} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    default Transfer read(LocalBuffer target, RemoteBuffer source) {
        return read(target, 0, source, 0, target.length(), TransferOptions.DEFAULT);
    }

    /**
     * Reads {@code length} bytes of {@code source} at {@code sourceOffset} into {@code target} at {@code targetOffset}.
     *
     * @param target the registered local buffer the bytes land in
     * @param targetOffset where in {@code target} the first byte lands
     * @param source the peer's published buffer
     * @param sourceOffset first byte of {@code source} to read
     * @param length bytes to move
     * @param options the deadline of the read
     * @return the running transfer, whose future completes once every chunk completed, or fails with
     *     {@link TransferTimeoutException} when the deadline passed first, {@link PeerLostException} or
     *     {@link LaneFailureException}
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer, a length is negative, a buffer
     *     was not registered or resolved by this engine, or the options carry a notification tag; nothing is posted
     * @throws io.rdma4j.ClosedException when this engine, {@code target} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    Transfer read(
            LocalBuffer target,
            long targetOffset,
            RemoteBuffer source,
            long sourceOffset,
            long length,
            TransferOptions options);

    /**
     * Starts a batch of writes; every request is checked before any is posted.
     *
     * @param requests the writes, each with its own options
     * @return one transfer per request, in the same order, each completing or failing as a single
     *     {@link #write(LocalBuffer, long, RemoteBuffer, long, long, TransferOptions) write} does, with
     *     {@link TransferBatch#future()} for the whole batch
     * @throws io.rdma4j.InvalidArgumentException when a request is bad as for a single write; the message names the
     *     request's index, and nothing of the batch is posted
     * @throws io.rdma4j.ClosedException when this engine, a source or its memory's arena is closed
     * @throws PeerLostException when a peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches a peer
     */
    TransferBatch writeAll(List<TransferRequest> requests);

    /**
     * Makes an empty {@link WriteBatch} of up to {@code capacity} descriptors between two buffers, to fill and write
     * many times: many small writes as one transfer, with nothing allocated per descriptor.
     *
     * @param source the registered local buffer every descriptor reads from
     * @param target the peer's published buffer every descriptor writes to
     * @param capacity most descriptors it holds (after adjacent ones are merged)
     * @return the batch
     * @throws io.rdma4j.InvalidArgumentException when a buffer was not registered or resolved by this engine, or the
     *     capacity is below 1
     * @throws io.rdma4j.ClosedException when this engine is closed
     */
    WriteBatch newWriteBatch(LocalBuffer source, RemoteBuffer target, int capacity);

    /**
     * Writes every descriptor of {@code batch} as one transfer. Its bytes are striped over the lanes as one write's
     * are, each chunk ending where its descriptor does; a notification tag is delivered once all of them landed and
     * carries the first descriptor's target offset and the batch's total bytes. The batch cannot be changed until the
     * transfer ends.
     *
     * @param batch a batch made by this engine, not empty, not being written
     * @param options deadline and notification tag; a CRC32C is refused (it covers one contiguous range)
     * @return the running transfer, whose future completes once every descriptor completed on this side, or fails as a
     *     single write's does (as for a single write, a provider may complete before the bytes are placed: the tag is
     *     what tells the target they landed)
     * @throws io.rdma4j.InvalidArgumentException when the batch is empty, was made by another engine, reads device
     *     memory or the options ask for a CRC32C; nothing is posted
     * @throws IllegalStateException when the batch is already being written
     * @throws io.rdma4j.ClosedException when this engine, the source or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     * @throws TransferException when no lane reaches the peer; the message gives each lane's health
     */
    Transfer write(WriteBatch batch, TransferOptions options);

    /** {@return the notifications peers sent here} */
    Notifications notifications();

    /**
     * Waits for the notification with {@code tag} (taking it out of {@link #notifications()}); returns {@code null} on
     * timeout.
     *
     * @param tag the tag a peer's write carries
     * @param timeout how long to wait
     * @return the notification, or {@code null} when none arrived in time
     * @throws InterruptedException when the waiting thread is interrupted
     */
    Notification awaitTag(long tag, Duration timeout) throws InterruptedException;

    /**
     * {@return the plan of a write of all of {@code source} to {@code target}, without moving a byte}
     *
     * @param source the local buffer of the write
     * @param target the peer's published buffer
     * @throws io.rdma4j.InvalidArgumentException when a buffer was not registered or resolved by this engine
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     */
    default Plan explain(LocalBuffer source, RemoteBuffer target) {
        return explain(source, 0, target, 0, source.length());
    }

    /**
     * {@return the plan of a write, without moving a byte}
     *
     * @param source the local buffer of the write
     * @param sourceOffset first byte of {@code source} to send
     * @param target the peer's published buffer
     * @param targetOffset where in {@code target} the first byte lands
     * @param length bytes to move
     * @throws io.rdma4j.InvalidArgumentException when a range lies outside its buffer or a buffer was not registered or
     *     resolved by this engine
     * @throws io.rdma4j.ClosedException when this engine, {@code source} or its memory's arena is closed
     * @throws PeerLostException when the peer is already known to be gone or restarted
     */
    Plan explain(LocalBuffer source, long sourceOffset, RemoteBuffer target, long targetOffset, long length);

    /**
     * Opens remote block storage as a volume: connects to every namespace's target through the NIC nearest
     * {@link VolumeSpec#near()} and stripes them (RAID-0). Needs a block-store provider on the class path
     * ({@code rdma4j-nvmeof}). Closed with the engine if not before.
     *
     * @param spec the namespaces, stripe unit and memory location
     * @return the open volume
     * @throws io.rdma4j.InvalidArgumentException when the namespaces do not fit the spec (stripe unit not a multiple of
     *     a block size, a namespace smaller than one stripe unit) or the provider rejects an option or transport
     * @throws io.rdma4j.ClosedException when this engine is closed
     * @throws io.rdma4j.BackendUnavailableException when no block-store provider for the transport is on the class path
     * @throws io.rdma4j.Rdma4jException when connecting to a target fails; the message names the target, the NIC and
     *     the cause (e.g. an {@code NvmeConnectionException})
     */
    StorageVolume openVolume(VolumeSpec spec);

    /**
     * Writes all of {@code source} to the start of {@code target}.
     *
     * @param source the registered local buffer to send from
     * @param target the extent of a volume, at least as long as {@code source}
     * @return the running transfer, whose future completes once every chunk completed, or fails with
     *     {@link TransferTimeoutException} when the deadline passed first, or a {@link TransferException} naming the
     *     namespace's target and the NVMe status
     * @throws io.rdma4j.InvalidArgumentException when the range is not whole blocks or lies outside the extent or the
     *     buffer, the extent is of another engine's volume, the options carry a tag, or the memory is in a confined
     *     arena; nothing is issued
     * @throws io.rdma4j.ClosedException when this engine, {@code source}, its memory's arena or the volume is closed
     */
    default Transfer write(LocalBuffer source, VolumeExtent target) {
        return write(source, 0, target, 0, source.length(), TransferOptions.DEFAULT);
    }

    /**
     * Writes {@code length} bytes (whole blocks) from {@code source} at {@code sourceOffset} to {@code target} at
     * {@code targetOffset}: stripe-unit pieces go to their namespaces, several in flight on each and every namespace at
     * once; the pieces are slices of the source (no copy). Deadlines apply; a notification tag does not (storage has no
     * peer). Bad arguments throw before any I/O; a failure names the namespace's target and the NVMe status.
     *
     * @param source the registered local buffer to send from
     * @param sourceOffset first byte of {@code source} to send
     * @param target the extent of a volume
     * @param targetOffset byte offset in {@code target}, a multiple of the block size
     * @param length bytes to move
     * @param options the deadline (a tag is ignored)
     * @return the running transfer, whose future completes once every chunk completed, or fails with
     *     {@link TransferTimeoutException} when the deadline passed first, or a {@link TransferException} naming the
     *     namespace's target and the NVMe status
     * @throws io.rdma4j.InvalidArgumentException when the range is not whole blocks or lies outside the extent or the
     *     buffer, the extent is of another engine's volume, the options carry a tag, or the memory is in a confined
     *     arena; nothing is issued
     * @throws io.rdma4j.ClosedException when this engine, {@code source}, its memory's arena or the volume is closed
     * @throws TransferException when device memory cannot be copied to host; nothing is issued
     */
    Transfer write(
            LocalBuffer source,
            long sourceOffset,
            VolumeExtent target,
            long targetOffset,
            long length,
            TransferOptions options);

    /**
     * Reads all of {@code source} into the start of {@code target}.
     *
     * @param target the registered local buffer the bytes land in
     * @param source the extent of a volume, no longer than {@code target}
     * @return the running transfer, whose future completes once every chunk completed, or fails with
     *     {@link TransferTimeoutException} when the deadline passed first, or a {@link TransferException} naming the
     *     namespace's target and the NVMe status
     * @throws io.rdma4j.InvalidArgumentException when the range is not whole blocks or lies outside the extent or the
     *     buffer, the extent is of another engine's volume, the options carry a tag, the target is read-only, or the
     *     memory is in a confined arena; nothing is issued
     * @throws io.rdma4j.ClosedException when this engine, {@code target}, its memory's arena or the volume is closed
     */
    default Transfer read(LocalBuffer target, VolumeExtent source) {
        return read(target, 0, source, 0, source.length(), TransferOptions.DEFAULT);
    }

    /**
     * Reads {@code length} bytes of {@code source} at {@code sourceOffset} into {@code target} at {@code targetOffset}.
     *
     * @param target the registered local buffer the bytes land in
     * @param targetOffset where in {@code target} the first byte lands
     * @param source the extent of a volume
     * @param sourceOffset byte offset in {@code source}, a multiple of the block size
     * @param length bytes to move
     * @param options the deadline of the read
     * @return the running transfer, whose future completes once every chunk completed, or fails with
     *     {@link TransferTimeoutException} when the deadline passed first, or a {@link TransferException} naming the
     *     namespace's target and the NVMe status
     * @throws io.rdma4j.InvalidArgumentException when the range is not whole blocks or lies outside the extent or the
     *     buffer, the extent is of another engine's volume, the options carry a tag, the target is read-only, or the
     *     memory is in a confined arena; nothing is issued
     * @throws io.rdma4j.ClosedException when this engine, {@code target}, its memory's arena or the volume is closed
     */
    Transfer read(
            LocalBuffer target,
            long targetOffset,
            VolumeExtent source,
            long sourceOffset,
            long length,
            TransferOptions options);

    /**
     * {@return the plan of a write of all of {@code source} to {@code target}: namespaces, NICs and why}
     *
     * @param source the local buffer of the write
     * @param target the extent of a volume
     * @throws io.rdma4j.InvalidArgumentException when the range is not whole blocks or lies outside the extent or the
     *     buffer, the extent is of another engine's volume, the options carry a tag, or the memory is in a confined
     *     arena; nothing is issued
     * @throws io.rdma4j.ClosedException when this engine, {@code source}, its memory's arena or the volume is closed
     */
    default Plan explain(LocalBuffer source, VolumeExtent target) {
        return explain(source, 0, target, 0, source.length());
    }

    /**
     * {@return the plan of a write to a volume, without moving a byte}
     *
     * @param source the local buffer of the write
     * @param sourceOffset first byte of {@code source} to send
     * @param target the extent of a volume
     * @param targetOffset byte offset in {@code target}
     * @param length bytes to move
     * @throws io.rdma4j.InvalidArgumentException when the range is not whole blocks or lies outside the extent or the
     *     buffer, the extent is of another engine's volume, the options carry a tag, or the memory is in a confined
     *     arena; nothing is issued
     * @throws io.rdma4j.ClosedException when this engine, {@code source}, its memory's arena or the volume is closed
     */
    Plan explain(LocalBuffer source, long sourceOffset, VolumeExtent target, long targetOffset, long length);

    /** {@return counters per local lane} */
    List<LaneStats> laneStats();

    /** {@return total time spent registering memory with the backend, in nanoseconds} */
    long registrationNanos();

    /**
     * Fails what is still in flight, withdraws from the rendezvous, closes lanes and frees registrations. Idempotent.
     *
     * @throws io.rdma4j.Rdma4jException the first failure among the steps, the later ones added to it as suppressed;
     *     every step is attempted
     */
    @Override
    void close();

    /**
     * Configuration of a {@link TransferEngine}. The setters only record values (a {@code null} where none is allowed
     * throws {@link NullPointerException} at once); {@link #build()} checks them all and throws
     * {@link io.rdma4j.InvalidArgumentException} naming the first one out of range.
     */
    final class Builder {
        private String name;
        private String backend = "auto";
        private String provider;
        private String directory;
        private Security security = Security.none();
        private String nicFilter;
        private int lanesPerNic = 1;
        private long chunkBytes = 1 << 20;
        private long smallThreshold = 128 << 10;
        private int queueDepth = 32;
        private int progressThreads = 1;
        private boolean busySpin;
        private int maxRetries = 4;
        private Duration cooldown = Duration.ofMillis(20);
        private Duration maxCooldown = Duration.ofSeconds(2);
        private Duration lease = Duration.ofSeconds(10);
        private Duration rendezvousDeadline = Duration.ofSeconds(15);
        private java.nio.file.Path topology;
        private final Map<Integer, Double> laneWeights = new HashMap<>();
        private UnaryOperator<EngineBackend> backendWrapper = UnaryOperator.identity();
        private MeterRegistry meterRegistry;

        Builder() {}

        /**
         * Peer name in the rendezvous ({@code [A-Za-z0-9][A-Za-z0-9._:@-]{0,62}}: up to 63 characters, no {@code /},
         * which separates a buffer's owner from its name in the directory); default {@code engine-PID-N}.
         *
         * @param name the peer name
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * {@code auto} (default: the available backend with the highest priority) or a backend name such as
         * {@code libfabric}.
         *
         * @param backend the backend name, or {@code auto}
         * @return this builder
         */
        public Builder backend(String backend) {
            this.backend = Objects.requireNonNull(backend, "backend");
            return this;
        }

        /**
         * Backend-specific transport, e.g. libfabric provider {@code tcp} or {@code shm}.
         *
         * @param provider the transport, or {@code null} for the backend's choice
         * @return this builder
         */
        public Builder provider(String provider) {
            this.provider = provider;
            return this;
        }

        /**
         * Use the directory at {@code target} instead of the embedded one: {@code host:port}; a list
         * {@code host:port,host:port} of directories serving one etcd, which the engine fails over between;
         * {@code etcd://host:port[,host:port...]} to keep the directory in etcd with no directory process (needs
         * {@code rdma4j-rendezvous-etcd} on the class path); or {@code inproc:NAME}.
         *
         * @param target the directory's address, or addresses
         * @param security token or TLS settings for reaching it
         * @return this builder
         */
        public Builder directory(String target, Security security) {
            this.directory = Objects.requireNonNull(target, "target");
            this.security = Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * NCCL-style NIC filter ({@code mlx5_0,mlx5_1} or {@code ^mlx5_2}).
         *
         * @param filter the filter, or {@code null} for every NIC
         * @return this builder
         */
        public Builder nicFilter(String filter) {
            this.nicFilter = filter;
            return this;
        }

        /**
         * Endpoints (queue pairs) opened per NIC or device; default 1.
         *
         * @param n endpoints per NIC, 1 or more
         * @return this builder
         */
        public Builder lanesPerNic(int n) {
            this.lanesPerNic = n;
            return this;
        }

        /**
         * Chunk size of striped transfers; default 1 MiB.
         *
         * @param bytes the chunk size in bytes
         * @return this builder
         */
        public Builder chunkSize(long bytes) {
            this.chunkBytes = bytes;
            return this;
        }

        /**
         * Transfers below this go on one lane; default 128 KiB.
         *
         * @param bytes the threshold in bytes
         * @return this builder
         */
        public Builder smallTransferThreshold(long bytes) {
            this.smallThreshold = bytes;
            return this;
        }

        /**
         * Operations kept in flight per lane; default 32.
         *
         * @param depth operations in flight per lane, 1 or more
         * @return this builder
         */
        public Builder queueDepth(int depth) {
            this.queueDepth = depth;
            return this;
        }

        /**
         * Dedicated progress threads (lanes are spread over them); default 1.
         *
         * @param n the number of threads, 1 or more
         * @return this builder
         */
        public Builder progressThreads(int n) {
            this.progressThreads = n;
            return this;
        }

        /**
         * Progress threads spin instead of backing off (lowest latency, burns a core each). Backing off, an idle
         * progress thread spins, yields, then sleeps for growing spells up to 1 ms: in the kernel on its lanes' queue
         * descriptors where the backend has them (libfabric tcp: a peer's bytes wake it), else parked, for at most 50
         * us while peers are connected ({@code -Drdma4j.engine.inboundParkNanos}).
         *
         * @param spin true to spin
         * @return this builder
         */
        public Builder busySpin(boolean spin) {
            this.busySpin = spin;
            return this;
        }

        /**
         * How often one chunk may be re-sent on another lane before the transfer fails; default 4.
         *
         * @param n re-sends allowed per chunk
         * @return this builder
         */
        public Builder maxRetries(int n) {
            this.maxRetries = n;
            return this;
        }

        /**
         * A failing lane pauses for {@code first}, doubling per consecutive failure up to {@code max}.
         *
         * @param first the pause after one failure
         * @param max the longest pause
         * @return this builder
         */
        public Builder laneCooldown(Duration first, Duration max) {
            this.cooldown = first;
            this.maxCooldown = max;
            return this;
        }

        /**
         * Lease asked from the directory; default 10 s.
         *
         * @param lease how long the announcement lives without renewal
         * @return this builder
         */
        public Builder lease(Duration lease) {
            this.lease = Objects.requireNonNull(lease, "lease");
            return this;
        }

        /**
         * How long one call of the rendezvous may take: each call to the directory (the announcement, its renewals, a
         * peer's lookup) and each lane handshake with a peer's engine; default 15 s. A first call pays for setting up
         * its channel (and, to the embedded directory, for loading gRPC): raise it where that is slow, as in an
         * emulated guest on a busy host or with a directory far away.
         *
         * @param deadline each call's deadline, 100 ms to 10 min
         * @return this builder
         */
        public Builder rendezvousDeadline(Duration deadline) {
            this.rendezvousDeadline = Objects.requireNonNull(deadline, "deadline");
            return this;
        }

        /**
         * Overrides a lane's striping weight (default: its link bandwidth).
         *
         * @param lane the local lane index
         * @param weight its share of a striped transfer, relative to the others
         * @return this builder
         */
        public Builder laneWeight(int lane, double weight) {
            this.laneWeights.put(lane, weight);
            return this;
        }

        /**
         * Rank NICs from this NCCL topology XML or captured sysfs root instead of scanning the live machine.
         *
         * @param fileOrRoot an NCCL topology XML file, or the root of a captured sysfs tree
         * @return this builder
         */
        public Builder topology(java.nio.file.Path fileOrRoot) {
            this.topology = fileOrRoot;
            return this;
        }

        /**
         * Wraps the opened backend (fault injection in tests, tracing).
         *
         * @param wrapper given the opened backend, returns the one the engine uses
         * @return this builder
         */
        public Builder backendWrapper(UnaryOperator<EngineBackend> wrapper) {
            this.backendWrapper = Objects.requireNonNull(wrapper, "wrapper");
            return this;
        }

        /**
         * Publishes the engine's meters (names {@code rdma4j.*}, tagged {@code engine=NAME}) in {@code registry}:
         * bytes, operations, errors and queue depths per lane, transfer durations by size class, failures by cause,
         * retries, registrations and registration-cache hits; volume write and read durations by size class and their
         * failures by cause ({@code rdma4j.volume.*}). They are registered when the engine is built and removed when it
         * closes. Volumes hand the registry to their storage connections, so NVMe-oF queues add their own meters
         * ({@code rdma4j.nvme.*}, per queue) while the volume is open. Without a registry (the default) the data path
         * does no metrics work at all.
         *
         * @param registry where the meters go, e.g. a {@code PrometheusMeterRegistry}; null for none
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = registry;
            return this;
        }

        /**
         * Discovers topology, opens the backend's devices, starts progress and announces the engine.
         *
         * @return the started engine; close it to withdraw and free everything
         * @throws io.rdma4j.InvalidArgumentException when a setting is out of range or the name breaks the naming rule
         * @throws io.rdma4j.BackendUnavailableException when no backend (or not the one named) can open here; the
         *     message says what to install
         * @throws io.rdma4j.NativeCallException when opening the backend's devices fails
         * @throws io.rdma4j.rendezvous.RendezvousException when the directory cannot be reached or the announcement
         *     fails
         */
        public TransferEngine build() {
            return EngineCore.open(new EngineConfig(
                    name,
                    backend,
                    provider,
                    directory,
                    security,
                    nicFilter,
                    lanesPerNic,
                    chunkBytes,
                    smallThreshold,
                    queueDepth,
                    progressThreads,
                    busySpin,
                    maxRetries,
                    cooldown,
                    maxCooldown,
                    lease,
                    rendezvousDeadline,
                    topology,
                    Map.copyOf(laneWeights),
                    backendWrapper,
                    meterRegistry));
        }
    }
}
