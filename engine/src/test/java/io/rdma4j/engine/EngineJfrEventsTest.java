package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.spi.FaultInjectingBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine's JFR events, read back from a recording: a transfer, the registration of its memory, and the chunk retry
 * and lane failure of an injected completion error. They are enabled by default, so {@code jcmd <pid> JFR.start}
 * records them with no code change; this test turns on exactly those four to read them.
 */
class EngineJfrEventsTest {
    private static final long MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void recordsTransferRegistrationRetryAndLaneFailure() throws Exception {
        FaultInjectingBackend[] faults = new FaultInjectingBackend[1];
        Path file = dir.resolve("engine.jfr");
        String target;
        try (Recording recording = new Recording()) {
            for (String name : List.of("Transfer", "Registration", "ChunkRetry", "LaneFailure")) {
                recording.enable("io.rdma4j." + name).withoutThreshold();
            }
            recording.start();
            try (Arena arena = Arena.ofShared();
                    TransferEngine a = TestEngines.tcp("jfr-a", 2)
                            .laneCooldown(Duration.ofMillis(5), Duration.ofMillis(50))
                            .backendWrapper(x -> faults[0] = new FaultInjectingBackend(x))
                            .build();
                    TransferEngine b = TestEngines.tcp("jfr-b", 2).build()) {
                target = b.name();
                MemorySegment landing = TestEngines.allocate(arena, 4 * MIB);
                b.publish("landing", b.register(landing), Access.anyPeer());
                MemorySegment src = TestEngines.allocate(arena, 4 * MIB);
                TestEngines.fill(src, 5);
                faults[0].failCompletions(1, 1);
                try (LocalBuffer s = a.register(src)) {
                    TransferResult r = a.write(s, b.name(), "landing", TransferOptions.tag(77))
                            .join();
                    assertTrue(r.retries() >= 1, "the injected error forces a retry: " + r);
                }
                // the writer's completion does not say the bytes are in the target's memory; the tag, sent after
                // them, does
                assertNotNull(b.awaitTag(77, Duration.ofSeconds(10)));
                assertEquals(-1, TestEngines.mismatch(src, 0, landing, 0, src.byteSize()));
            }
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        RecordedEvent transfer = only(events, "io.rdma4j.Transfer", e -> target.equals(e.getString("peer")));
        assertEquals("write", transfer.getString("operation"));
        assertEquals(4 * MIB, transfer.getLong("bytes"));
        assertEquals("ok", transfer.getString("result"));
        assertTrue(transfer.getInt("retries") >= 1, transfer.toString());
        assertTrue(transfer.getLong("transferNanos") > 0, transfer.toString());
        assertFalse(transfer.getString("lanes").isEmpty(), transfer.toString());

        assertTrue(
                events.stream()
                        .anyMatch(e -> e.getEventType().getName().equals("io.rdma4j.Registration")
                                && e.getLong("bytes") == 4 * MIB
                                && "host".equals(e.getString("kind"))),
                "a registration of the 4 MiB source: " + names(events));
        RecordedEvent retry = only(events, "io.rdma4j.ChunkRetry", e -> target.equals(e.getString("peer")));
        assertEquals(1, retry.getInt("failedLane"));
        assertTrue(retry.getString("error").contains("injected completion error"), retry.toString());
        RecordedEvent lane = only(events, "io.rdma4j.LaneFailure", e -> e.getInt("lane") == 1);
        assertTrue(lane.getLong("cooldownNanos") > 0, lane.toString());
        assertTrue(lane.getString("error").contains("injected completion error"), lane.toString());
    }

    private static RecordedEvent only(
            List<RecordedEvent> events, String type, java.util.function.Predicate<RecordedEvent> which) {
        List<RecordedEvent> found = events.stream()
                .filter(e -> e.getEventType().getName().equals(type))
                .filter(which)
                .toList();
        assertEquals(1, found.size(), type + " events: " + found + "; all: " + names(events));
        return found.get(0);
    }

    private static List<String> names(List<RecordedEvent> events) {
        return events.stream().map(e -> e.getEventType().getName()).distinct().toList();
    }
}
