package io.rdma4j.engine.internal;

/**
 * One copy of a transfer's notification record, sent on one lane that carried its data. Posting it on the same
 * connection after that lane's chunks is what orders it behind them at the target; the target delivers the tag once a
 * copy arrived from every lane named in the record.
 */
final class NotifyCopy {
    final TransferImpl transfer;
    /** The initiator lane whose data this copy vouches for (carried in the immediate). */
    final int markLane;
    int lane;
    int remoteLane;
    int connection;
    int attempts;

    NotifyCopy(TransferImpl transfer, int markLane, int lane, int remoteLane, int connection) {
        this.transfer = transfer;
        this.markLane = markLane;
        this.lane = lane;
        this.remoteLane = remoteLane;
        this.connection = connection;
    }
}
