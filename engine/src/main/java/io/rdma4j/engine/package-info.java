/**
 * The transfer engine's public API: {@link io.rdma4j.engine.TransferEngine} moves bytes one-sided between registered
 * buffers of peers, striped across topology-ranked lanes, with notifications, deadlines and failover; and to and from
 * remote block storage ({@link io.rdma4j.engine.StorageVolume}: NVMe-oF namespaces striped RAID-0, reached through the
 * NIC nearest the memory).
 *
 * <h2>Errors</h2>
 *
 * Everything this package throws, and every failure a transfer's future completes with, is an unchecked
 * {@link io.rdma4j.Rdma4jException} (its Javadoc draws the whole tree); {@code catch (Rdma4jException e)} catches all
 * of it. Each method's {@code @throws} says which kinds it throws:
 *
 * <ul>
 *   <li>{@link io.rdma4j.InvalidArgumentException}: an argument the engine checks is wrong (a range outside a buffer, a
 *       name against the naming rule, a size or count out of bounds, options that do not go together, a buffer or
 *       extent of another engine). Thrown by the call before anything is posted; fix the call.
 *   <li>{@link io.rdma4j.ClosedException}: the engine, the buffer handle, the volume, or the arena of the memory is
 *       closed.
 *   <li>{@link io.rdma4j.engine.UnknownPeerException}, {@link io.rdma4j.engine.UnknownBufferException}: a name the
 *       directory does not resolve (for us).
 *   <li>{@link io.rdma4j.engine.TransferException} and its subclasses {@link io.rdma4j.engine.PeerLostException},
 *       {@link io.rdma4j.engine.LaneFailureException}, {@link io.rdma4j.engine.TransferTimeoutException} and
 *       {@link io.rdma4j.engine.ChecksumMismatchException}: a transfer's outcome. A transfer's future completes
 *       exceptionally with one of these; {@link io.rdma4j.engine.Transfer#join()} throws it unwrapped. A write or read
 *       throws one itself only when it can tell before posting that it cannot run (the peer is already lost, no lane
 *       reaches it).
 *   <li>{@link io.rdma4j.BackendUnavailableException}, {@link io.rdma4j.NativeCallException} and the other native
 *       failures: from control-path calls that reach native code (building an engine, registering memory, opening a
 *       volume). On the data path they arrive as the cause of a {@code TransferException}.
 * </ul>
 *
 * JDK exceptions remain only for what the caller did: a {@code null} argument throws {@link NullPointerException}
 * unless a parameter says {@code null} is allowed (so methods do not list it); {@link LocalBuffer#segment()} of device
 * memory throws {@link UnsupportedOperationException}; {@link TransferEngine#awaitTag} throws
 * {@link InterruptedException} when interrupted; a transfer the caller cancelled completes with
 * {@link java.util.concurrent.CancellationException}.
 */
package io.rdma4j.engine;
