package io.rdma4j.perf;

import io.rdma4j.nvmeof.IoCompletion;
import io.rdma4j.nvmeof.PolledQueue;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One workload through a {@link PolledQueue} from the calling thread alone, as SPDK's perf drives its queue pair: keep
 * {@code qd} I/Os in flight, busy-polling, and submit the next I/O from the completion handler of the one that
 * finished. An I/O larger than one command moves (the controller's MDTS) goes as several commands and completes with
 * its last, as SPDK's driver splits it. Records every latency (submit to completion) up to a million.
 */
final class NvmePolledLoop implements IoCompletion {
    private final PolledQueue queue;
    private final MemorySegment memory;
    private final int size;
    private final boolean write;
    private final boolean random;
    private final long slots;
    private final int blockSize;
    private final SplittableRandom rnd = new SplittableRandom(1);
    private final long[] started;
    /** Commands of each I/O still in flight. */
    private final int[] parts;

    private final int perCommand;
    private final long[] lat = new long[1_000_000];
    private long sequence;
    private long ops;
    private int recorded;
    private boolean stopping;
    private int failedStatus = PolledQueue.OK;

    /**
     * @param memory at least {@code qd * size} bytes, best confined to this thread (reads land in it straight)
     * @param bytes how much of the namespace the I/Os spread over
     */
    NvmePolledLoop(
            PolledQueue queue, MemorySegment memory, int size, int qd, boolean write, boolean random, long bytes) {
        this.queue = queue;
        this.memory = memory;
        this.size = size;
        this.write = write;
        this.random = random;
        this.slots = bytes / size;
        this.blockSize = queue.blockSize();
        this.started = new long[qd];
        this.parts = new int[qd];
        this.perCommand = Math.min(size, queue.maxBytes());
        if ((long) qd * ((size + perCommand - 1) / perCommand) > queue.depth()) {
            throw new IllegalArgumentException(qd + " I/Os of " + size + " bytes in commands of " + perCommand
                    + " need more than the queue's " + queue.depth() + " slots");
        }
    }

    /** @return what {@code seconds} of the workload did */
    NvmeRun.Result run(double seconds) {
        recorded = 0;
        ops = 0;
        stopping = false;
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        for (int slot = 0; slot < started.length; slot++) {
            submit(slot);
        }
        while (queue.inFlight() > 0) {
            queue.poll(this);
            if (!stopping && System.nanoTime() - end >= 0) {
                stopping = true;
            }
        }
        if (failedStatus != PolledQueue.OK) {
            throw new IllegalStateException("a polled " + (write ? "write" : "read") + " of " + size + " bytes failed: "
                    + PolledQueue.describe(failedStatus)
                    + (queue.failure() != null ? " (" + queue.failure().getMessage() + ")" : ""));
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        return new NvmeRun.Result(ops, secs, Arrays.copyOf(lat, recorded));
    }

    private void submit(int slot) {
        long at = (random ? rnd.nextLong(slots) : sequence++ % slots) * size;
        started[slot] = System.nanoTime();
        for (int off = 0; off < size; off += perCommand) {
            long lba = (at + off) / blockSize;
            long where = (long) slot * size + off;
            boolean queued = write
                    ? queue.write(lba, memory, where, perCommand, slot)
                    : queue.read(lba, memory, where, perCommand, slot);
            if (!queued) {
                throw new IllegalStateException(
                        "the polled queue had no free slot for I/O " + slot + " of " + started.length);
            }
            parts[slot]++;
        }
    }

    @Override
    public void complete(long tag, int status) {
        int slot = (int) tag;
        if (status != PolledQueue.OK) {
            failedStatus = status;
            stopping = true;
        }
        if (--parts[slot] > 0) {
            return;
        }
        if (recorded < lat.length) {
            lat[recorded++] = System.nanoTime() - started[slot];
        }
        ops++;
        if (!stopping) {
            submit(slot);
        }
    }
}
