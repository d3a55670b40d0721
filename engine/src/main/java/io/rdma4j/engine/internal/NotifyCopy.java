package io.rdma4j.engine.internal;

/**
 * One copy of a transfer's notification record, sent on one lane that carried its data. Posting it on the same
 * connection after that lane's chunks is what orders it behind them at the target; the target delivers the tag once a
 * copy arrived from every lane named in the record.
 */
final class NotifyCopy extends LaneWork {
    final TransferImpl transfer;
    /** The initiator lane whose data this copy vouches for (carried in the immediate). */
    final int markLane;

    int lane;
    int remoteLane;
    int connection;
    int attempts;

    /**
     * Whether to stop sending this copy. Once a sequence number is taken every byte has landed, so the copies go out
     * even if the transfer was cancelled or timed out meanwhile: a sequence the target never completes would hold its
     * ring (and so every later notification to it) forever. Only a lost peer ends them.
     */
    boolean abandoned() {
        return transfer.peer.lost() || transfer.notifySeq < 0 && transfer.isTerminal();
    }

    NotifyCopy(TransferImpl transfer, int markLane, int lane, int remoteLane, int connection) {
        this.transfer = transfer;
        this.markLane = markLane;
        this.lane = lane;
        this.remoteLane = remoteLane;
        this.connection = connection;
    }
}
