package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.PolledIo;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * An NVMe-oF I/O queue of its own, driven from one thread: submit many reads and writes, then poll for their
 * completions. Nothing runs behind the caller's back (no thread, no lock, no future): a submit writes the command in
 * place, {@link #poll} sends every command queued since the last poll in one call (one {@code sendmsg} over NVMe/TCP,
 * one chain of SENDs in one {@code ibv_post_send} over NVMe/RDMA), reaps what arrived, and reports each finished
 * command to an {@link IoCompletion} with the caller's tag. With NVMe/TCP digests off, none of this allocates. It is
 * the interface for callers that keep a queue full themselves, such as checkpoint writers and KV-cache tiers;
 * {@link Controller#read}/{@link Controller#write} stay the simple, thread-safe way.
 *
 * <pre>{@code
 * try (PolledQueue q = controller.openPolledQueue(1, 64)) {
 *     for (int i = 0; i < n; i++) {
 *         while (!q.read(lba(i), buffer, i * 4096L, 4096, i)) {
 *             q.poll(done);                 // every slot busy: reap some
 *         }
 *     }
 *     while (q.inFlight() > 0) {
 *         q.poll(done, Duration.ofSeconds(1));
 *     }
 * }
 * }</pre>
 *
 * <p>Data lives in native memory (any arena) that must stay open until its command completes: a write's bytes are sent
 * from it by address when the queue next polls, and a read's land in it. Over NVMe/TCP, reads into memory confined to
 * the polling thread are received straight into it, and other memory gets the data through the queue's receive buffer.
 * Over NVMe/RDMA the target moves the data itself, by RDMA READ and WRITE on the caller's memory, which is registered
 * with the NIC at its first command and stays registered with the controller; writes within the controller's in-capsule
 * size travel in the command capsule. The queue has a queue ID of its own, reserved at connect time
 * ({@link ConnectOptions#polledQueues()}).
 */
public final class PolledQueue implements AutoCloseable {
    /** The command succeeded. */
    public static final int OK = 0;
    /** The queue failed (connection lost, I/O timeout, protocol error, closed): {@link #failure()} says why. */
    public static final int FAILED = PolledIo.FAILED;
    /** A read's memory was freed (its arena closed) before its data arrived; the data was dropped. */
    public static final int MEMORY_FREED = PolledIo.MEMORY_FREED;

    private final PolledIo queue;
    private final long nsid;
    private final int blockSize;
    private final long blocks;
    private final int maxBytes;
    private final Runnable onClose;
    private boolean closed;

    PolledQueue(PolledIo queue, long nsid, NamespaceInfo ns, Runnable onClose) {
        this.queue = queue;
        this.nsid = nsid;
        this.blockSize = ns.blockSize();
        this.blocks = ns.blocks();
        this.maxBytes = (int) Math.min(queue.maxData(), 65536L * blockSize) / blockSize * blockSize;
        this.onClose = onClose;
    }

    /**
     * Queues a read of {@code length} bytes (whole blocks) at {@code lba} into {@code memory} from {@code offset}.
     *
     * @return false when every slot is busy: poll, then submit again
     * @throws NvmeConnectionException when the queue failed
     * @throws IllegalArgumentException for a range outside the namespace or the memory, or memory that is not native
     */
    public boolean read(long lba, MemorySegment memory, long offset, int length, long tag) {
        check(lba, memory, offset, length, false);
        return queue.submitIo(false, nsid, lba, length / blockSize, memory, offset, length, tag);
    }

    /** Queues a read filling all of {@code memory}; see {@link #read(long, MemorySegment, long, int, long)}. */
    public boolean read(long lba, MemorySegment memory, long tag) {
        return read(lba, memory, 0, size(memory), tag);
    }

    /**
     * Queues a write of {@code length} bytes (whole blocks) of {@code memory} from {@code offset} to {@code lba}.
     *
     * @return false when every slot is busy: poll, then submit again
     * @throws NvmeConnectionException when the queue failed
     * @throws IllegalArgumentException for a range outside the namespace or the memory, or memory that is not native
     */
    public boolean write(long lba, MemorySegment memory, long offset, int length, long tag) {
        check(lba, memory, offset, length, true);
        return queue.submitIo(true, nsid, lba, length / blockSize, memory, offset, length, tag);
    }

    /** Queues a write of all of {@code memory}; see {@link #write(long, MemorySegment, long, int, long)}. */
    public boolean write(long lba, MemorySegment memory, long tag) {
        return write(lba, memory, 0, size(memory), tag);
    }

    /**
     * Queues a Flush of the namespace's volatile write cache.
     *
     * @return false when every slot is busy
     */
    public boolean flush(long tag) {
        return queue.submitFlush(nsid, tag);
    }

    /**
     * Sends what was queued and reports what finished, without blocking.
     *
     * @return how many commands completed
     */
    public int poll(IoCompletion completion) {
        return queue.poll(completion);
    }

    /**
     * Like {@link #poll(IoCompletion)}, but when nothing finished waits up to {@code timeout} for the connection to
     * have something, then polls once more. Returns at once when nothing is in flight.
     *
     * @return how many commands completed (0 when the time ran out)
     */
    public int poll(IoCompletion completion, Duration timeout) {
        return queue.await(completion, timeout.toNanos());
    }

    /** @return commands submitted and not yet completed */
    public int inFlight() {
        return queue.inFlight();
    }

    /** @return how many commands may be in flight at once */
    public int depth() {
        return queue.depth();
    }

    /** @return the namespace's block size in bytes */
    public int blockSize() {
        return blockSize;
    }

    /** @return the largest read or write one command moves, in bytes */
    public int maxBytes() {
        return maxBytes;
    }

    /** @return null while the queue works, else why it does not */
    public NvmeException failure() {
        return queue.failure();
    }

    /** @return a status an {@link IoCompletion} got, named */
    public static String describe(int status) {
        return switch (status) {
            case OK -> "Successful Completion";
            case FAILED -> "the queue failed (see failure())";
            case MEMORY_FREED -> "the read's memory was freed before its data arrived";
            default ->
                NvmeStatusException.name(false, status >>> 8 & 7, status & 0xff)
                        + ((status & 0x4000) != 0 ? " (do not retry)" : "");
        };
    }

    /**
     * Closes the connection and frees its queue ID. Commands in flight are dropped without a completion; closed from a
     * completion handler, they complete with {@link #FAILED} in the poll that called it.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            queue.close();
        } finally {
            onClose.run();
        }
    }

    private int size(MemorySegment memory) {
        long n = memory.byteSize();
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "a segment of " + n + " bytes is more than one command moves (" + maxBytes + "): split it");
        }
        return (int) n;
    }

    private void check(long lba, MemorySegment memory, long offset, int length, boolean write) {
        String op = write ? "write" : "read";
        if (!memory.isNative()) {
            throw new IllegalArgumentException(
                    op + " memory is a heap segment; a polled queue moves native memory: allocate it from an Arena");
        }
        if (!write && memory.isReadOnly()) {
            throw new IllegalArgumentException("read memory is read-only: pass a writable segment");
        }
        if (length <= 0 || length % blockSize != 0 || length > maxBytes) {
            throw new IllegalArgumentException(op + " of " + length + " bytes: namespace " + nsid + " moves whole "
                    + blockSize + "-byte blocks, at most " + maxBytes + " bytes a command");
        }
        if (offset < 0 || offset > memory.byteSize() - length) {
            throw new IllegalArgumentException(op + " of " + length + " bytes at offset " + offset
                    + " does not fit in a segment of " + memory.byteSize() + " bytes");
        }
        if (lba < 0 || lba > blocks - length / blockSize) {
            throw new IllegalArgumentException(op + " at LBA " + lba + " of " + length / blockSize
                    + " blocks passes the end of namespace " + nsid + " (" + blocks + " blocks)");
        }
        if (!memory.scope().isAlive()) {
            throw new IllegalStateException(op + " memory is already closed");
        }
    }
}
