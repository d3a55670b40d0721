package io.rdma4j.engine.spi;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * An opened backend: a fixed set of lanes, memory registration, connections and the data path.
 *
 * <p><b>Threading.</b> Control calls ({@link #register}, {@link #prepareConnection}, {@link #connect}) may come from
 * any thread. Data calls ({@code post*}, {@link #poll}) for one lane come from one thread at a time (the engine's
 * progress thread owning the lane); different lanes may be driven concurrently.
 *
 * <p><b>Data path.</b> Posting never throws and never allocates: it returns {@link #OK}, {@link #BACK_PRESSURED} (the
 * lane's queue is full: poll and post again), or a negative value such as {@link #FAILED} when the lane failed or the
 * arguments are wrong (unknown or closed registration, unknown or disconnected connection, a range outside the
 * registration); {@link #laneError(int)} then says why, and {@link #recover(int)} clears it. A post that did not return
 * {@link #OK} holds nothing and never completes. The engine relies on this: it takes a slot before posting and gives it
 * back on any other status, so a throw would leak the slot. The same holds after {@link #close()}: posts fail and
 * {@link #poll} returns 0.
 *
 * <p><b>Polling.</b> {@link #poll} returns at most {@code out.capacity()} completions and keeps the rest for later
 * polls: every operation posted with {@link #OK} completes exactly once, whatever capacity the caller polls with.
 * Control calls may add and remove connections of a lane while its data thread posts and polls: backends keep their
 * tables safe for one writer under a lock and a reader without it.
 *
 * <p><b>Completion and ordering.</b> A {@link Completions#LOCAL} completion of a write means the operation left the
 * initiator's hands; it need not mean the bytes are placed yet (libfabric with manual progress completes at transmit,
 * verbs RC after the acknowledgement). What a backend must guarantee instead: operations posted on one connection of
 * one lane are placed at the target in posting order, so a write with immediate data is seen by the target only after
 * the writes posted before it on that connection. The engine sends its notification behind the data on every lane that
 * carried some. A write with immediate data produces a {@link Completions#REMOTE_IMMEDIATE} completion at the target,
 * possibly more than once (EFA); the engine de-duplicates. An operation with a wrong key never lands; whether the
 * initiator or only the target sees the error is up to the transport.
 */
public interface EngineBackend extends AutoCloseable {
    int OK = 0;
    int BACK_PRESSURED = 1;
    int FAILED = -1;

    /**
     * @return the backend's name, as its provider reports it; lower-cased, it is the backend id peers see on the wire
     *     ({@code [a-z0-9][a-z0-9._-]{0,31}}), and engines connect only to peers announcing the same id
     */
    String name();

    /** @return one line on what runs underneath, e.g. {@code libfabric 1.17 tcp;ofi_rxm on lo} */
    String description();

    /**
     * @return the transport inside the backend as peers should see it (libfabric provider such as {@code tcp;ofi_rxm}),
     *     or empty
     */
    default String provider() {
        return "";
    }

    /** @return the lanes, index i at position i */
    List<LaneDescriptor> lanes();

    /** @return the number of bytes of immediate data a write may carry (at least 4) */
    int immediateBytes();

    /** Registers native memory on every lane for local use and remote read and write. */
    BackendRegistration register(MemorySegment segment);

    /**
     * Registers device (GPU) memory on every lane so the NICs read and write it directly (GPUDirect RDMA), for local
     * use and remote read and write. The registration's {@link BackendRegistration#address()} is the device address.
     *
     * @throws io.rdma4j.DeviceRegistrationException when this backend or machine cannot register it (the message says
     *     why and what would make it work); the engine then stages the memory through registered host memory
     */
    default BackendRegistration registerDevice(DeviceMemory memory) {
        throw new io.rdma4j.DeviceRegistrationException(name() + " cannot register device memory (" + memory.kind()
                + " at " + memory.pciAddress() + "): it has no GPUDirect path");
    }

    /**
     * Starts a connection from {@code lane} to one remote lane and returns its handle (>= 0). For connectionless
     * transports the handle only names the peer address slot; for connected ones (RC queue pairs) this creates the
     * queue pair.
     */
    int prepareConnection(int lane);

    /** @return the opaque bytes the peer needs to reach this end of {@code connection} (endpoint name, QP info) */
    byte[] endpointInfo(int lane, int connection);

    /**
     * Completes {@code connection} with the peer's {@link #endpointInfo} bytes; rejects malformed bytes with a clear
     * exception.
     */
    void connect(int lane, int connection, byte[] remoteEndpointInfo);

    /** Forgets a connection (peer gone or restarted); operations still in flight on it complete with errors. */
    void disconnect(int lane, int connection);

    /** Writes {@code length} bytes at {@code localAddress} (inside registration {@code localHandle}) to the peer. */
    int postWrite(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context);

    /**
     * The most pieces one {@link #postWriteVector} on {@code lane} takes; 1 (the default) where the backend has no
     * vectored write, and the engine then never calls it.
     */
    default int writeVectorLimit(int lane) {
        return 1;
    }

    /**
     * The most bytes one {@link #postWriteVector} on {@code lane} should carry, all pieces together: beyond it the
     * backend's single writes are cheaper per byte (the default: no bound).
     */
    default long writeVectorBytes(int lane) {
        return Long.MAX_VALUE;
    }

    /**
     * One write of {@code count} pieces (2 to {@link #writeVectorLimit}), one completion with {@code context}: piece
     * {@code i} copies {@code lengths[i]} bytes at {@code localAddresses[i]} (inside registration {@code localHandle})
     * to the peer's {@code remoteAddresses[i]} (inside the region of {@code remoteKey}). Scattered blocks of a batch go
     * out as one operation. A count outside 2 to the limit is a programming error (an exception); backends whose
     * {@link #writeVectorLimit} is 1 refuse every call with an {@link UnsupportedOperationException}.
     */
    default int postWriteVector(
            int lane,
            int connection,
            int localHandle,
            long[] localAddresses,
            long[] remoteAddresses,
            long[] lengths,
            int count,
            long remoteKey,
            long context) {
        throw new UnsupportedOperationException(getClass().getSimpleName()
                + " has no vectored write (its writeVectorLimit is 1): post each piece with postWrite");
    }

    /**
     * Like {@link #postWrite}, and the target gets a {@link Completions#REMOTE_IMMEDIATE} completion carrying
     * {@code immediate}.
     */
    int postWriteImmediate(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int immediate,
            long context);

    /** Reads {@code length} bytes of the peer's memory into {@code localAddress}. */
    int postRead(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context);

    /**
     * Drains up to {@code out.capacity()} completions of {@code lane} into {@code out} (cleared first); returns the
     * count. Drives progress.
     */
    int poll(int lane, Completions out);

    /**
     * A kernel wait over {@code lanes} for the thread that polls them, or {@code null} (the default) where the lanes
     * cannot announce work: the engine then parks for short spells between polls.
     */
    default IdleWait idleWait(int[] lanes) {
        return null;
    }

    /** @return why {@code lane} failed, or {@code null} while it is healthy */
    String laneError(int lane);

    /**
     * Tries to bring a failed lane back after its cool-down; returns true when the lane and its existing connections
     * are usable again, false when the lane stays out of service (the engine then routes around it).
     */
    boolean recover(int lane);

    /** Closes every lane, connection and registration. Idempotent. */
    @Override
    void close();
}
