package io.rdma4j.engine.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** A JFR event for each lane taken out of service after an error, with how long it cools down. */
@Name("io.rdma4j.LaneFailure")
@Label("Lane Failure")
@Category({"rdma4j", "Engine"})
@Description("A lane failed an operation and is paused before it is used again")
@StackTrace(false)
final class LaneFailureEvent extends jdk.jfr.Event {
    @Label("Lane")
    int lane;

    @Label("Device")
    String device;

    @Label("Error")
    String error;

    @Label("Cooldown")
    @Timespan
    long cooldownNanos;

    @Label("Failures In A Row")
    int failures;

    static void emit(int lane, String device, String error, long cooldownNanos, int failures) {
        LaneFailureEvent e = new LaneFailureEvent();
        if (e.shouldCommit()) {
            e.lane = lane;
            e.device = device;
            e.error = error;
            e.cooldownNanos = cooldownNanos;
            e.failures = failures;
            e.commit();
        }
    }
}
