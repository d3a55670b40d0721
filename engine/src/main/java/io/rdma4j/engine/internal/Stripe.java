package io.rdma4j.engine.internal;

/**
 * A contiguous byte range of one transfer assigned to one lane pair: the lane's progress thread cuts it into chunks.
 * One object per lane per transfer (and per retry), never per chunk; a transfer one lane pair carries whole is its own
 * stripe ({@link TransferImpl} extends this), so that a small write allocates none.
 */
class Stripe extends LaneWork {
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

    /**
     * A transfer's own stripe: all {@code length} bytes on one lane pair, or no stripe at all ({@code localLane} -1)
     * when the transfer is striped over several.
     */
    Stripe(int localLane, int remoteLane, int connection, long length) {
        this.transfer = (TransferImpl) this;
        this.localLane = localLane;
        this.remoteLane = remoteLane;
        this.connection = connection;
        this.offset = 0;
        this.length = length;
        this.attempt = 0;
    }
}
