package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-queue meters of a controller over NVMe/TCP against {@link ScriptedTarget}: each I/O command is timed on the queue
 * it went out on, its bytes counted when it succeeded and counted as an error when the target refused it.
 */
class ControllerMetricsTest {
    @TempDir
    Path home;

    @Test
    void timesAndCountsEveryCommandOnItsQueue() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        ConnectOptions options = ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(2)
                .withQueueDepth(8)
                .withConnectTimeout(Duration.ofSeconds(5))
                .withIoTimeout(Duration.ofSeconds(5))
                .withKeepAlive(Duration.ZERO);
        int writes = 10;
        int reads = 6;
        try (ScriptedTarget t = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared()) {
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options, registry)) {
                MemorySegment block = arena.allocate(4096);
                for (int i = 0; i < writes; i++) {
                    c.write(1, i * 8L, block).get(10, TimeUnit.SECONDS);
                }
                // past the end of the 1 MiB namespace: the target answers LBA Out of Range
                ExecutionException e = assertThrows(
                        ExecutionException.class, () -> c.write(1, 4096, block).get(10, TimeUnit.SECONDS));
                assertInstanceOf(NvmeStatusException.class, e.getCause());
                // another thread's commands go on the other queue
                AtomicReference<Exception> failed = new AtomicReference<>();
                Thread.ofPlatform()
                        .start(() -> {
                            try {
                                for (int i = 0; i < reads; i++) {
                                    c.read(1, i * 8L, block).get(10, TimeUnit.SECONDS);
                                }
                            } catch (Exception x) {
                                failed.set(x);
                            }
                        })
                        .join();
                assertNull(failed.get());

                long commands = 0;
                for (String q : List.of("0", "1")) {
                    Timer timer =
                            registry.get("rdma4j.nvme.commands").tag("queue", q).timer();
                    assertEquals(
                            q.equals("0") ? writes + 1 : reads,
                            timer.count(),
                            "each thread's commands on its own queue; queue " + q);
                    commands += timer.count();
                    assertEquals(
                            0,
                            registry.get("rdma4j.nvme.outstanding")
                                    .tag("queue", q)
                                    .gauge()
                                    .value());
                }
                assertEquals(writes + reads + 1, commands);
                assertEquals((writes + reads) * 4096L, (long) sum(registry, "rdma4j.nvme.bytes"));
                assertEquals(1, (long) sum(registry, "rdma4j.nvme.errors"));
                assertEquals(
                        t.target().toString(),
                        registry.get("rdma4j.nvme.commands")
                                .timers()
                                .iterator()
                                .next()
                                .getId()
                                .getTag("target"));
            }
            assertEquals(List.of(), registry.getMeters(), "a closed controller leaves no meters behind");
        }
    }

    private static double sum(MeterRegistry registry, String name) {
        return registry.get(name).counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count)
                .sum();
    }
}
