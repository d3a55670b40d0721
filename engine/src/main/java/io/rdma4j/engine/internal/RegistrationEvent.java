package io.rdma4j.engine.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** A JFR event for each memory registration the engine made with its backend (cache hits make none). */
@Name("io.rdma4j.Registration")
@Label("Memory Registration")
@Category({"rdma4j", "Engine"})
@Description("Memory registered with the backend's NICs, and how long the registration took")
@StackTrace(false)
final class RegistrationEvent extends jdk.jfr.Event {
    @Label("Bytes")
    @DataAmount
    long bytes;

    @Label("Kind")
    @Description("host: a segment of host memory; adopted: device memory or a staging buffer")
    String kind;

    @Label("Registration Duration")
    @Timespan
    long registrationNanos;

    static void emit(long bytes, String kind, long registrationNanos) {
        RegistrationEvent e = new RegistrationEvent();
        if (e.shouldCommit()) {
            e.bytes = bytes;
            e.kind = kind;
            e.registrationNanos = registrationNanos;
            e.commit();
        }
    }
}
