package io.rdma4j.nvmeof.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A JFR event for an NVMe-oF command that got no completion within the I/O timeout, after which its queue's connection
 * is reset: {@code jcmd <pid> JFR.start} records it with no code change.
 */
@Name("io.rdma4j.NvmeCommandTimeout")
@Label("NVMe Command Timeout")
@Category({"rdma4j", "NVMe-oF"})
@Description("A command without a completion within the I/O timeout; its queue's connection was reset")
@StackTrace(false)
public final class CommandTimeoutEvent extends jdk.jfr.Event {
    @Label("Queue")
    String queue;

    @Label("Command")
    String command;

    @Label("Transport")
    String transport;

    @Label("I/O Timeout")
    @Timespan
    long timeoutNanos;

    public static void emit(String queue, String command, String transport, long timeoutNanos) {
        CommandTimeoutEvent e = new CommandTimeoutEvent();
        if (e.shouldCommit()) {
            e.queue = queue;
            e.command = command;
            e.transport = transport;
            e.timeoutNanos = timeoutNanos;
            e.commit();
        }
    }
}
