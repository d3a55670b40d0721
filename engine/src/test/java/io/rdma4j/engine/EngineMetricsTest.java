package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rdma4j.engine.spi.FaultInjectingBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The engine's meters over real tcp engines: per-lane bytes and operations against what was written, the transfer timer
 * against the transfers, failures by cause and retries against injected faults, registration-cache hits against a
 * repeated register, and the meters leaving the registry when the engine closes.
 */
class EngineMetricsTest {
    private static final long MIB = 1 << 20;

    @Test
    void countsBytesAndOperationsPerLaneAndTimesEachTransferBySize() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (Arena arena = Arena.ofShared();
                TransferEngine a =
                        TestEngines.tcp("metrics-a", 2).meterRegistry(registry).build();
                TransferEngine b = TestEngines.tcp("metrics-b", 2).build()) {
            b.publish("landing", b.register(TestEngines.allocate(arena, 4 * MIB)), Access.anyPeer());
            MemorySegment src = TestEngines.allocate(arena, MIB);
            TestEngines.fill(src, 3);
            int writes = 5;
            try (LocalBuffer s = a.register(src)) {
                RemoteBuffer dst = a.peer(b.name()).buffer("landing");
                for (int i = 0; i < writes; i++) {
                    a.write(s, dst).join();
                }
                a.write(s, 0, dst, 0, 4096, TransferOptions.DEFAULT).join();
            }
            String engine = a.name();
            long bytes = writes * MIB + 4096;
            // 1 MiB in 256 KiB chunks is 4 operations; the 4 KiB write is one
            long operations = writes * 4L + 1;
            assertEquals(bytes, sum(registry.find("rdma4j.lane.bytes").tag("engine", engine)));
            assertEquals(operations, sum(registry.find("rdma4j.lane.operations").tag("engine", engine)));
            for (LaneStats l : a.laneStats()) {
                FunctionCounter laneBytes = registry.get("rdma4j.lane.bytes")
                        .tag("engine", engine)
                        .tag("lane", Integer.toString(l.lane()))
                        .functionCounter();
                assertEquals(l.bytes(), (long) laneBytes.count(), "lane " + l.lane());
            }
            assertEquals(writes, timer(registry, engine, "write", "1MiB").count(), "one timing per 1 MiB write");
            assertEquals(1, timer(registry, engine, "write", "4KiB").count());
            assertEquals(0, timer(registry, engine, "read", "1MiB").count());
            assertEquals(0, sum(registry.find("rdma4j.transfer.failures").tag("engine", engine)));
            for (Gauge g :
                    registry.find("rdma4j.lane.inflight").tag("engine", engine).gauges()) {
                assertEquals(0, g.value(), "nothing is in flight once every transfer joined");
            }
            assertEquals(
                    0,
                    registry.get("rdma4j.transfers.active")
                            .tag("engine", engine)
                            .gauge()
                            .value());
        }
    }

    @Test
    void countsFailuresByCauseAndRetriesOfInjectedFaults() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        FaultInjectingBackend[] faults = new FaultInjectingBackend[1];
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("metrics-fault-a", 2)
                        .laneCooldown(Duration.ofMillis(5), Duration.ofMillis(50))
                        .backendWrapper(x -> faults[0] = new FaultInjectingBackend(x))
                        .meterRegistry(registry)
                        .build();
                TransferEngine b = TestEngines.tcp("metrics-fault-b", 2).build()) {
            b.publish("landing", b.register(TestEngines.allocate(arena, 4 * MIB)), Access.anyPeer());
            String engine = a.name();
            try (LocalBuffer s = a.register(TestEngines.allocate(arena, 2 * MIB))) {
                RemoteBuffer dst = a.peer(b.name()).buffer("landing");
                // one failed completion on lane 1: its chunk is sent again on lane 0 and the write succeeds
                faults[0].failCompletions(1, 1);
                TransferResult r = a.write(s, dst).join();
                assertTrue(r.retries() >= 1, r.toString());
                assertEquals(r.retries(), (long) registry.get("rdma4j.transfer.retries")
                        .tag("engine", engine)
                        .tag("kind", "chunk")
                        .counter()
                        .count());
                assertTrue(sum(registry.find("rdma4j.lane.errors").tag("engine", engine)) >= 1);
                // every completion fails: the write runs out of lanes
                faults[0].failCompletions(0, 1000).failCompletions(1, 1000);
                CompletionException e = assertThrows(
                        CompletionException.class,
                        () -> a.write(s, dst).future().join());
                assertInstanceOf(LaneFailureException.class, e.getCause());
                faults[0].failCompletions(0, 0).failCompletions(1, 0);
            }
            assertEquals(1, failures(registry, engine, "lane_failure"));
            assertEquals(0, failures(registry, engine, "timeout"));
            assertEquals(0, failures(registry, engine, "peer_lost"));
        }
    }

    @Test
    void countsRegistrationsAndCacheHits() {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (Arena arena = Arena.ofShared();
                TransferEngine e = TestEngines.tcp("metrics-reg", 1)
                        .meterRegistry(registry)
                        .build()) {
            String engine = e.name();
            double registrations = counter(registry, "rdma4j.registrations", engine);
            double hits = counter(registry, "rdma4j.registration.cache.hits", engine);
            MemorySegment big = TestEngines.allocate(arena, MIB);
            try (LocalBuffer whole = e.register(big);
                    LocalBuffer inner = e.register(big.asSlice(4096, 8192));
                    LocalBuffer again = e.register(big)) {
                assertTrue(inner.reused() && again.reused() && !whole.reused());
            }
            assertEquals(registrations + 1, counter(registry, "rdma4j.registrations", engine));
            assertEquals(hits + 2, counter(registry, "rdma4j.registration.cache.hits", engine));
            assertTrue(registry.get("rdma4j.registration.time")
                            .tag("engine", engine)
                            .functionTimer()
                            .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)
                    > 0);
        }
    }

    @Test
    void closingTheEngineTakesItsMetersOutOfTheRegistry() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        String engine;
        try (TransferEngine e =
                TestEngines.tcp("metrics-close", 2).meterRegistry(registry).build()) {
            engine = e.name();
            String scrape = registry.scrape();
            for (String name : List.of(
                    "rdma4j_lane_bytes_total",
                    "rdma4j_lane_operations_total",
                    "rdma4j_lane_errors_total",
                    "rdma4j_lane_inflight",
                    "rdma4j_lane_queued",
                    "rdma4j_transfer_duration_seconds_bucket",
                    "rdma4j_transfer_failures_total",
                    "rdma4j_transfer_retries_total",
                    "rdma4j_registrations_total",
                    "rdma4j_registration_cache_hits_total",
                    "rdma4j_registrations_active",
                    "rdma4j_transfers_active",
                    "rdma4j_notifications_queued",
                    "rdma4j_notifications_stray_total")) {
                assertTrue(scrape.contains(name + "{"), name + " in\n" + scrape);
            }
            assertTrue(scrape.contains("engine=\"" + engine + "\""), scrape);
        }
        assertEquals(
                List.of(),
                registry.find("rdma4j.lane.bytes").tag("engine", engine).meters());
        assertEquals(List.of(), registry.getMeters(), "an engine that closed leaves nothing behind");
    }

    private static Timer timer(MeterRegistry registry, String engine, String op, String size) {
        return registry.get("rdma4j.transfer.duration")
                .tag("engine", engine)
                .tag("op", op)
                .tag("size", size)
                .timer();
    }

    private static long failures(MeterRegistry registry, String engine, String cause) {
        return (long) registry.get("rdma4j.transfer.failures")
                .tag("engine", engine)
                .tag("cause", cause)
                .counter()
                .count();
    }

    private static double counter(MeterRegistry registry, String name, String engine) {
        return registry.get(name).tag("engine", engine).functionCounter().count();
    }

    /** The sum over every lane of a per-lane counter. */
    private static long sum(Search search) {
        double total = search.functionCounters().stream()
                        .mapToDouble(FunctionCounter::count)
                        .sum()
                + search.counters().stream()
                        .mapToDouble(io.micrometer.core.instrument.Counter::count)
                        .sum();
        return (long) total;
    }
}
