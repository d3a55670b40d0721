package io.rdma4j.nvmeof;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A controller's meters per I/O queue, registered at connect for every queue asked for (tagged {@code target},
 * {@code subsystem} and {@code queue}): the latency of each I/O command (whose count over time is the queue's IOPS),
 * the bytes it moved, the commands that failed and the commands outstanding. {@link #OFF} without a registry: the I/O
 * path then takes its path without metrics, whose completion callback captures nothing more.
 */
final class QueueMetrics {
    static final QueueMetrics OFF = new QueueMetrics(null, null, null, 0);

    /** Histogram buckets: a command over loopback TCP takes tens of microseconds, a slow target seconds. */
    private static final Duration[] BUCKETS = {
        Duration.ofNanos(20_000),
        Duration.ofNanos(50_000),
        Duration.ofNanos(100_000),
        Duration.ofNanos(250_000),
        Duration.ofNanos(500_000),
        Duration.ofMillis(1),
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofSeconds(1)
    };

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final Timer[] latency;
    private final Counter[] bytes;
    private final Counter[] errors;
    private final AtomicInteger[] outstanding;

    private QueueMetrics(MeterRegistry registry, Target target, String subsystem, int queues) {
        this.registry = registry;
        latency = new Timer[queues];
        bytes = new Counter[queues];
        errors = new Counter[queues];
        outstanding = new AtomicInteger[queues];
        for (int q = 0; q < queues; q++) {
            Tags tags = Tags.of("target", target.toString(), "subsystem", subsystem, "queue", Integer.toString(q));
            latency[q] = add(Timer.builder("rdma4j.nvme.commands")
                    .description("I/O commands completed on the queue, from submission to completion")
                    .tags(tags)
                    .serviceLevelObjectives(BUCKETS)
                    .register(registry));
            bytes[q] = add(Counter.builder("rdma4j.nvme.bytes")
                    .description("Bytes read and written by the queue's commands that succeeded")
                    .baseUnit("bytes")
                    .tags(tags)
                    .register(registry));
            errors[q] = add(Counter.builder("rdma4j.nvme.errors")
                    .description("Commands on the queue that failed: an NVMe status or a broken connection")
                    .tags(tags)
                    .register(registry));
            outstanding[q] = new AtomicInteger();
            add(Gauge.builder("rdma4j.nvme.outstanding", outstanding[q], AtomicInteger::get)
                    .description("Commands submitted on the queue and not completed: its depth in use")
                    .tags(tags)
                    .register(registry));
        }
    }

    /**
     * Registers the meters of {@code queues} I/O queues.
     *
     * @param registry where they go; null gives {@link #OFF}
     */
    static QueueMetrics create(MeterRegistry registry, Target target, String subsystem, int queues) {
        return registry == null ? OFF : new QueueMetrics(registry, target, subsystem, queues);
    }

    private <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    /** A command goes out on I/O queue {@code queue}. {@return when, for {@link #completed}} */
    long submitted(int queue) {
        if (queue < outstanding.length) {
            outstanding[queue].incrementAndGet();
        }
        return System.nanoTime();
    }

    /**
     * The command submitted at {@code startNanos} on {@code queue} completed.
     *
     * @param length the bytes it moved
     * @param ok whether it succeeded
     */
    void completed(int queue, int length, long startNanos, boolean ok) {
        if (queue >= latency.length) {
            return;
        }
        outstanding[queue].decrementAndGet();
        latency[queue].record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
        if (ok) {
            bytes[queue].increment(length);
        } else {
            errors[queue].increment();
        }
    }

    /** Removes the meters from the registry (the controller closes). */
    void close() {
        if (registry == null) {
            return;
        }
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
    }
}
