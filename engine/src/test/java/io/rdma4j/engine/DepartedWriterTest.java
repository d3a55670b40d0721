package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A writer that closes its engine as soon as its tagged write completes (a process that exits after its last message)
 * must not lose that message: the target's engine sees the writer withdraw from the directory, maybe before it has
 * polled the write's completion, and still delivers the tag. None of the writes' notification copies is dropped as a
 * stray.
 */
class DepartedWriterTest {
    private static final int ROUNDS = 40;

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void aWriteCompletedBeforeItsWriterLeftIsDelivered(String provider) throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (Arena arena = Arena.ofShared();
                TransferEngine b =
                        builder(provider, "departed-b").meterRegistry(registry).build()) {
            MemorySegment dst = TestEngines.allocate(arena, 4096);
            b.publish("landing", b.register(dst), Access.anyPeer());
            List<Integer> missing = new ArrayList<>();
            for (int round = 1; round <= ROUNDS; round++) {
                try (TransferEngine a = builder(provider, "departed-a").build();
                        LocalBuffer src = a.register(TestEngines.allocate(arena, 64))) {
                    a.write(src, 0, a.peer(b.name()).buffer("landing"), 0, 64, TransferOptions.tag(round))
                            .join();
                }
                if (b.awaitTag(round, Duration.ofSeconds(3)) == null) {
                    missing.add(round);
                }
            }
            assertEquals(List.of(), missing, "tags whose writer left right after writing and that never arrived");
            assertEquals(
                    0.0,
                    registry.get("rdma4j.notifications.stray")
                            .tag("engine", b.name())
                            .functionCounter()
                            .count(),
                    "notification copies dropped for naming no inbox");
        }
    }

    private static TransferEngine.Builder builder(String provider, String prefix) {
        return provider.equals("shm") ? TestEngines.shm(prefix, 1) : TestEngines.tcp(prefix, 1);
    }
}
