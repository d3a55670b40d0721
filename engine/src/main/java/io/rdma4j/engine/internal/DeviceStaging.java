package io.rdma4j.engine.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A volume transfer of device memory, staged a piece at a time. A write copies each piece's bytes from the device into
 * host memory just before the piece is issued, so the copies overlap the I/O of the pieces ahead of them, instead of
 * one copy of the whole range before the first piece; the producer is synced once, by the caller, before the first
 * copy. A read copies each piece's bytes to the device as soon as the piece arrived, on a lane of its own (one virtual
 * thread, pieces in completion order), while the other pieces are still moving, instead of one copy of the whole range
 * after the last piece; the piece counts as done, and its host memory is reused, only once its copy finished. The host
 * memory is the registration's staging copy when the engine staged the device memory; otherwise a bounce pool of one
 * piece-sized slot per piece the volume keeps in flight, or, when the range is no larger than that pool, one host copy
 * of the range. {@link #close} frees the pool and ends the lane; the transfer calls it once no piece is in flight.
 */
final class DeviceStaging implements VolumeTransfer.PieceMemory, AutoCloseable {
    private final BufferImpls.Local local;
    private final long memoryOffset;
    /** Where pieces go: the staging copy, the whole-range copy or the pool. */
    private final MemorySegment host;
    /** Null unless {@link #host} is a pool: its free slots. */
    private final ArrayBlockingQueue<MemorySegment> free;

    private final MemorySegment[] slots;
    private final long slotBytes;
    private final Arena arena;
    private final boolean write;
    /** A read's: where pieces are copied to the device. */
    private final ExecutorService lane;

    /**
     * @param inFlight the most pieces the transfer has in flight at once (the volume's windows, summed)
     * @param pieceBytes the largest piece
     */
    DeviceStaging(
            BufferImpls.Local local, long memoryOffset, long length, int inFlight, long pieceBytes, boolean write) {
        this.local = local;
        this.write = write;
        this.lane = write
                ? null
                : Executors.newSingleThreadExecutor(
                        Thread.ofVirtual().name("rdma4j-volume-device").factory());
        this.memoryOffset = memoryOffset;
        this.slotBytes = pieceBytes;
        if (local.device.staged()) {
            arena = null;
            host = local.segment;
            free = null;
            slots = null;
        } else if (length <= inFlight * pieceBytes) {
            arena = Arena.ofShared();
            host = arena.allocate(length, 4096);
            free = null;
            slots = null;
        } else {
            arena = Arena.ofShared();
            host = arena.allocate(inFlight * pieceBytes, 4096);
            free = new ArrayBlockingQueue<>(inFlight);
            slots = new MemorySegment[inFlight];
            for (int i = 0; i < inFlight; i++) {
                slots[i] = host.asSlice(i * pieceBytes, pieceBytes);
                free.add(slots[i]);
            }
        }
    }

    /** {@return the host memory a transfer of {@code length} bytes would take, for {@code explain}} */
    static String describe(BufferImpls.Local local, long length, int inFlight, long pieceBytes) {
        if (local.device.staged()) {
            return "the registration's staging copy";
        }
        if (length <= inFlight * pieceBytes) {
            return "a host copy of " + length + " bytes made for the transfer";
        }
        return "a bounce pool of " + inFlight + " x " + (pieceBytes >> 10) + " KiB made for the transfer";
    }

    @Override
    public MemorySegment acquire(long rangeOffset, long length) {
        MemorySegment piece;
        if (free == null) {
            piece = host.asSlice((host == local.segment ? memoryOffset : 0) + rangeOffset, length);
        } else {
            MemorySegment slot = free.poll();
            if (slot == null) {
                throw new IllegalStateException("no free bounce slot for a piece: more pieces in flight than the "
                        + slots.length + " the volume's windows allow (an engine bug)");
            }
            piece = slot.asSlice(0, length);
        }
        if (write) {
            try {
                local.device.memory().copyToHost(memoryOffset + rangeOffset, piece);
            } catch (RuntimeException e) {
                release(piece);
                throw e;
            }
        }
        return piece;
    }

    @Override
    public Executor lane() {
        return lane;
    }

    /**
     * No NIC wrote into device memory, so there is nothing for {@code DeviceMemory.afterNicWrite()} to make visible:
     * the copy itself puts the bytes where the device sees them.
     */
    @Override
    public void land(long rangeOffset, MemorySegment piece) {
        local.device.memory().copyFromHost(piece, memoryOffset + rangeOffset);
    }

    @Override
    public void release(MemorySegment piece) {
        if (free != null) {
            free.add(slots[(int) ((piece.address() - host.address()) / slotBytes)]);
        }
    }

    @Override
    public void close() {
        if (lane != null) {
            lane.shutdown(); // no piece is in flight: its last task is the one running this, if any
        }
        if (arena != null) {
            arena.close();
        }
    }
}
