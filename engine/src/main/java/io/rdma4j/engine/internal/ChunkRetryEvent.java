package io.rdma4j.engine.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A JFR event for each chunk sent again after its lane failed, and the lane it moved to (-1: none was left). */
@Name("io.rdma4j.ChunkRetry")
@Label("Chunk Retry")
@Category({"rdma4j", "Engine"})
@Description("A chunk of a transfer re-routed after a lane failure")
@StackTrace(false)
final class ChunkRetryEvent extends jdk.jfr.Event {
    @Label("Peer")
    String peer;

    @Label("Offset")
    long offset;

    @Label("Length")
    @DataAmount
    long length;

    @Label("Attempt")
    int attempt;

    @Label("Failed Lane")
    int failedLane;

    @Label("New Lane")
    int newLane;

    @Label("Error")
    String error;

    static void emit(TransferImpl t, long offset, long length, int attempt, int failedLane, int newLane, String err) {
        ChunkRetryEvent e = new ChunkRetryEvent();
        if (e.shouldCommit()) {
            e.peer = t.peer.name;
            e.offset = offset;
            e.length = length;
            e.attempt = attempt;
            e.failedLane = failedLane;
            e.newLane = newLane;
            e.error = err;
            e.commit();
        }
    }
}
