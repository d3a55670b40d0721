/**
 * Engine internals (not API). {@code EngineCore} builds every part below and answers the public
 * {@link io.rdma4j.engine.TransferEngine} calls.
 *
 * <p>The path of one {@code engine.write(source, offset, target, offset, length, options)}:
 *
 * <ol>
 *   <li>{@code Preparer} checks every argument, has the {@code Connector} connect the peer's lanes once
 *       ({@code PeerLink} keeps them), ranks the lane pairs by distance to the memory on both sides
 *       ({@code LaneLevels}, kept on the link while the lanes' state holds) and assigns the bytes to the best ones
 *       ({@code Planner}). It makes the {@code TransferImpl}, the transfer's state and the caller's future. Nothing is
 *       posted until every check passed.
 *   <li>{@code Dispatcher.launch} links the transfer into {@code ActiveTransfers} (so that a closing engine or a lost
 *       peer can fail it) and hands one {@code Stripe} per lane pair to the lane's {@code ProgressThread} through its
 *       {@code Inbox}; a transfer one pair carries whole is its own stripe.
 *   <li>The progress thread cuts stripes into chunks, posts them to the backend while the lane has room
 *       ({@code LaneRuntime} holds each posted chunk in a slot), polls completions and reports them to the dispatcher:
 *       retry or failover of a failed chunk on another lane, and, once every byte completed, the notification.
 *   <li>A tagged write's notification goes out through the peer's {@code OutChannel}: a 64-byte
 *       {@code NotificationRecord} written with immediate data, one {@code NotifyCopy} on every lane that carried data,
 *       behind that data. A write with a CRC32C then reads the target's verdict word.
 *   <li>At the target, {@code Inbound} owns one {@code InChannel} per initiator, delivers a record once a copy arrived
 *       from every lane it names, and queues the tag ({@code NotificationQueue}); a departed initiator's inbox waits
 *       out {@code Departures} before it goes.
 * </ol>
 *
 * <p>Around that path: {@code Membership} announces this engine in the directory and watches peers leave or restart;
 * {@code HandshakeService} answers peers connecting to us; {@code RegistrationCache} keeps memory registered while
 * transfers use it; {@code BatchImpl} is a reusable {@link io.rdma4j.engine.WriteBatch} whose descriptors the progress
 * thread reads in place; {@code Volumes} carries transfers to NVMe volumes; {@code EngineMetrics} exposes the counters
 * as meters.
 */
package io.rdma4j.engine.internal;
