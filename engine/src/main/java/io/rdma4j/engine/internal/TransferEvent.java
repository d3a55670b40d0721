package io.rdma4j.engine.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A JFR event for each transfer that ended: {@code jcmd <pid> JFR.start} records it with no code change. Created only
 * when it ends, so a disabled event costs a flag check; its own duration is the transfer's, in a field, because a
 * transfer starts on the caller's thread and ends on a progress thread.
 */
@Name("io.rdma4j.Transfer")
@Label("Transfer")
@Category({"rdma4j", "Engine"})
@Description("A one-sided read or write that ended, with its bytes, lanes, duration and result")
@StackTrace(false)
final class TransferEvent extends jdk.jfr.Event {
    @Label("Operation")
    String operation;

    @Label("Peer")
    String peer;

    @Label("Bytes")
    @DataAmount
    long bytes;

    @Label("Lanes")
    @Description("Local lanes that carried data, as a comma-separated list")
    String lanes;

    @Label("Retries")
    int retries;

    @Label("Transfer Duration")
    @Timespan
    long transferNanos;

    @Label("Result")
    @Description("ok, or the failure's exception type and message")
    String result;

    static void emit(TransferImpl t, java.util.List<Integer> lanes, Throwable failure) {
        TransferEvent e = new TransferEvent();
        if (e.shouldCommit()) { // the lanes' text is built only for a recording that takes the event
            e.operation = t.op == Op.READ ? "read" : "write";
            e.peer = t.peer.name;
            e.bytes = t.total;
            e.lanes = lanes == null ? "" : lanes.toString();
            e.retries = t.retries();
            e.transferNanos = System.nanoTime() - t.startNanos;
            e.result = failure == null ? "ok" : failure.getClass().getSimpleName() + ": " + failure.getMessage();
            e.commit();
        }
    }
}
