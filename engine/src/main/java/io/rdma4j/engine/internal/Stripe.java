package io.rdma4j.engine.internal;

/**
 * A contiguous byte range of one transfer assigned to one lane pair: the lane's progress thread cuts it into chunks.
 * One object per lane per transfer (and per retry), never per chunk.
 */
final class Stripe {
    final TransferImpl transfer;
    final int localLane;
    final int remoteLane;
    final int connection;
    final long offset;
    final long length;
    final int attempt;
    long cursor;

    Stripe(
            TransferImpl transfer,
            int localLane,
            int remoteLane,
            int connection,
            long offset,
            long length,
            int attempt) {
        this.transfer = transfer;
        this.localLane = localLane;
        this.remoteLane = remoteLane;
        this.connection = connection;
        this.offset = offset;
        this.length = length;
        this.attempt = attempt;
    }
}
