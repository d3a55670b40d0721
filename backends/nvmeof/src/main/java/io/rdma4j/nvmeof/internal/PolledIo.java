package io.rdma4j.nvmeof.internal;

import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.NvmeStatusException;
import java.lang.foreign.MemorySegment;

/**
 * An I/O queue run to completion on its caller's thread, whatever the transport: what {@code PolledQueue} drives.
 * Submitting writes a command into its slot; {@link #poll} sends what was queued and reports what finished. One thread
 * at a time drives it.
 */
public interface PolledIo extends AutoCloseable {
    /** Completion statuses below 0. */
    int FAILED = -1, MEMORY_FREED = -2;

    /**
     * Queues a Read or Write of {@code blocks} blocks at {@code slba}, its data {@code length} bytes of native
     * {@code memory} at {@code offset}; the caller has checked the range. It goes out on the next {@link #poll}.
     *
     * @return false when every slot is busy (poll, then submit again)
     * @throws NvmeException when the queue failed
     */
    boolean submitIo(
            boolean write, long nsid, long slba, int blocks, MemorySegment memory, long offset, int length, long tag);

    /** Queues a Flush of namespace {@code nsid}; false when every slot is busy. */
    boolean submitFlush(long nsid, long tag);

    /**
     * Sends what was queued, handles what arrived, and reports each finished command to {@code handler}; never blocks.
     *
     * @return commands completed
     */
    int poll(IoCompletion handler);

    /**
     * Polls, and when nothing completed waits up to {@code timeoutNanos} for the connection to have something, then
     * polls again.
     *
     * @return commands completed
     */
    int await(IoCompletion handler, long timeoutNanos);

    /** @return commands submitted and not yet completed */
    int inFlight();

    /** @return how many commands fit at once */
    int depth();

    /** @return the largest data one command moves */
    int maxData();

    /** @return null while the connection works, else why it does not */
    NvmeException failure();

    /**
     * Waits on this thread, until {@code deadlineNanos}, for the Fabrics Connect the queue sent as its only command.
     *
     * @throws NvmeException the queue's failure, the Connect's NVMe status, or no completion in time
     */
    default void awaitConnect(String name, int qid, long deadlineNanos) {
        int[] status = {Integer.MIN_VALUE};
        IoCompletion done = (tag, st) -> status[0] = st;
        while (status[0] == Integer.MIN_VALUE) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw new NvmeConnectionException(
                        name + ": Connect(qid=" + qid + ") got no completion within the connect timeout");
            }
            await(done, Math.min(left, 100_000_000L));
        }
        int st = status[0];
        if (st == FAILED) {
            throw failure();
        }
        if (st != 0) {
            throw new NvmeStatusException(
                    "Connect(qid=" + qid + ")", true, st >>> 8 & 7, st & 0xff, (st & 0x4000) != 0, 0);
        }
    }

    /** Closes the connection; commands in flight are dropped without a completion. */
    @Override
    void close();
}
