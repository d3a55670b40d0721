package io.rdma4j.engine.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.rdma4j.engine.ChecksumMismatchException;
import io.rdma4j.engine.LaneFailureException;
import io.rdma4j.engine.PeerLostException;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;

/**
 * One engine's meters in a Micrometer registry, all registered when the engine is built (tagged {@code engine=NAME}),
 * so a hook on the data path indexes an array and never builds tags or looks a meter up. Counters the engine keeps
 * anyway (per-lane bytes, operations and errors; registrations and cache hits) are read by the registry when it
 * publishes, at no cost to the data path. With no registry the engine holds {@link #OFF}, whose hooks return on one
 * null check and allocate nothing.
 */
final class EngineMetrics {
    /** The engine built without a registry: every hook returns at once. */
    static final EngineMetrics OFF = new EngineMetrics(null, "");

    /** Tag values of the size classes of {@code rdma4j.transfer.duration}: at most 4 KiB, 64 KiB, 1 MiB, 16 MiB. */
    static final String[] SIZE_CLASSES = {"4KiB", "64KiB", "1MiB", "16MiB", "larger"};

    private static final long[] SIZE_LIMITS = {4L << 10, 64L << 10, 1L << 20, 16L << 20, Long.MAX_VALUE};

    /** Tag values of {@code rdma4j.transfer.failures}, by the exception a transfer failed with. */
    static final String[] CAUSES = {
        "lane_failure", "peer_lost", "timeout", "checksum_mismatch", "cancelled", "transfer", "other"
    };

    /** Tag values of {@code rdma4j.transfer.retries}: what was sent again after a lane failed. */
    static final int RETRY_CHUNK = 0;

    static final int RETRY_NOTIFICATION = 1;
    static final int RETRY_VERDICT = 2;
    private static final String[] RETRY_KINDS = {"chunk", "notification", "verdict"};

    /** Histogram buckets of the transfer timers: an RDMA write takes microseconds, a large one seconds. */
    private static final Duration[] BUCKETS = {
        Duration.ofNanos(10_000),
        Duration.ofNanos(50_000),
        Duration.ofNanos(100_000),
        Duration.ofNanos(500_000),
        Duration.ofMillis(1),
        Duration.ofMillis(5),
        Duration.ofMillis(10),
        Duration.ofMillis(50),
        Duration.ofMillis(100),
        Duration.ofMillis(500),
        Duration.ofSeconds(1),
        Duration.ofSeconds(5)
    };

    private final MeterRegistry registry;
    private final Tags tags;
    private final List<Meter> meters = new ArrayList<>();
    /** [0: write, 1: read][size class]. */
    private final Timer[][] durations;

    private final Counter[] failures;
    private final Counter[] retries;
    /** Volume transfers: [0: write, 1: read][size class], and failures by cause. */
    private final Timer[][] volumeDurations;

    private final Counter[] volumeFailures;

    private EngineMetrics(MeterRegistry registry, String engine) {
        this.registry = registry;
        this.tags = Tags.of("engine", engine);
        if (registry == null) {
            durations = null;
            failures = null;
            retries = null;
            volumeDurations = null;
            volumeFailures = null;
            return;
        }
        durations = sizeTimers(
                "rdma4j.transfer.duration", "Time from the call to the end of transfers that succeeded, by size class");
        failures = causeCounters("rdma4j.transfer.failures", "Transfers that failed, by cause");
        volumeDurations = sizeTimers(
                "rdma4j.volume.duration",
                "Time from the call to the end of volume writes and reads that succeeded, by size class");
        volumeFailures = causeCounters("rdma4j.volume.failures", "Volume writes and reads that failed, by cause");
        retries = new Counter[RETRY_KINDS.length];
        for (int k = 0; k < RETRY_KINDS.length; k++) {
            retries[k] = add(Counter.builder("rdma4j.transfer.retries")
                    .description("Chunks, notifications and CRC32C verdict reads sent again after a lane failed")
                    .tags(tags)
                    .tag("kind", RETRY_KINDS[k])
                    .register(registry));
        }
    }

    /**
     * Registers the meters of an engine's lanes and registrations in {@code registry}.
     *
     * @param registry where the meters go; null gives {@link #OFF}
     */
    static EngineMetrics create(
            MeterRegistry registry, String engine, LaneRuntime[] lanes, RegistrationCache registrations) {
        if (registry == null) {
            return OFF;
        }
        EngineMetrics m = new EngineMetrics(registry, engine);
        for (LaneRuntime l : lanes) {
            Tags lt = m.tags.and("lane", Integer.toString(l.lane), "device", l.descriptor.device());
            m.add(FunctionCounter.builder("rdma4j.lane.bytes", l, x -> x.bytesCompleted.get())
                    .description("Bytes of chunks the lane completed (reads and writes)")
                    .baseUnit("bytes")
                    .tags(lt)
                    .register(registry));
            m.add(FunctionCounter.builder("rdma4j.lane.operations", l, x -> x.chunksCompleted.get())
                    .description("Chunks the lane completed")
                    .tags(lt)
                    .register(registry));
            m.add(FunctionCounter.builder("rdma4j.lane.errors", l, x -> x.chunkErrors.get())
                    .description("Operations the lane failed (each pauses the lane)")
                    .tags(lt)
                    .register(registry));
            m.add(Gauge.builder("rdma4j.lane.inflight", l, LaneRuntime::inflight)
                    .description("Operations posted on the lane and not completed: its send queue's depth")
                    .tags(lt)
                    .register(registry));
            m.add(Gauge.builder("rdma4j.lane.queued", l, x -> x.pending.size())
                    .description("Stripes waiting for the lane's send queue")
                    .tags(lt)
                    .register(registry));
        }
        m.add(FunctionCounter.builder("rdma4j.registrations", registrations, RegistrationCache::registrations)
                .description("Memory registrations made with the backend (cache misses and adopted device memory)")
                .tags(m.tags)
                .register(registry));
        m.add(FunctionCounter.builder("rdma4j.registration.cache.hits", registrations, RegistrationCache::hits)
                .description("Registrations answered from the cache: the range was already registered")
                .tags(m.tags)
                .register(registry));
        m.add(FunctionCounter.builder(
                        "rdma4j.registration.deregistrations", registrations, RegistrationCache::deregistrations)
                .description("Registrations closed with the backend")
                .tags(m.tags)
                .register(registry));
        m.add(Gauge.builder("rdma4j.registrations.active", registrations, RegistrationCache::size)
                .description("Registered ranges, in use or idle in the cache")
                .tags(m.tags)
                .register(registry));
        m.add(FunctionTimer.builder(
                        "rdma4j.registration.time",
                        registrations,
                        RegistrationCache::registrations,
                        RegistrationCache::totalRegistrationNanos,
                        TimeUnit.NANOSECONDS)
                .description("Time spent registering memory with the backend")
                .tags(m.tags)
                .register(registry));
        return m;
    }

    /**
     * Registers the gauges of the engine's transfers in flight and notifications not yet taken, and the count of
     * notifications dropped for naming no inbox.
     *
     * @param dispatcher whose transfers in flight are counted
     * @param notes the queue of notifications from peers
     * @param inbound what peers send us
     */
    void watch(Dispatcher dispatcher, NotificationQueue notes, Inbound inbound) {
        if (registry == null) {
            return;
        }
        add(Gauge.builder("rdma4j.transfers.active", dispatcher, Dispatcher::activeTransfers)
                .description("Transfers started and not yet ended")
                .tags(tags)
                .register(registry));
        add(Gauge.builder("rdma4j.notifications.queued", notes, NotificationQueue::size)
                .description("Notifications from peers not yet taken")
                .tags(tags)
                .register(registry));
        add(FunctionCounter.builder("rdma4j.notifications.stray", inbound, Inbound::strayImmediates)
                .description("Notification copies from peers that named no inbox here, dropped")
                .tags(tags)
                .register(registry));
    }

    /** {@return timers [0: write, 1: read][size class] named {@code name}} */
    private Timer[][] sizeTimers(String name, String description) {
        Timer[][] timers = new Timer[2][SIZE_CLASSES.length];
        for (int op = 0; op < 2; op++) {
            for (int c = 0; c < SIZE_CLASSES.length; c++) {
                timers[op][c] = add(Timer.builder(name)
                        .description(description)
                        .tags(tags)
                        .tag("op", op == 0 ? "write" : "read")
                        .tag("size", SIZE_CLASSES[c])
                        .serviceLevelObjectives(BUCKETS)
                        .register(registry));
            }
        }
        return timers;
    }

    private Counter[] causeCounters(String name, String description) {
        Counter[] counters = new Counter[CAUSES.length];
        for (int c = 0; c < CAUSES.length; c++) {
            counters[c] = add(Counter.builder(name)
                    .description(description)
                    .tags(tags)
                    .tag("cause", CAUSES[c])
                    .register(registry));
        }
        return counters;
    }

    private <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    /** A transfer of {@code bytes} succeeded {@code nanos} after it was started. */
    void completed(byte op, long bytes, long nanos) {
        if (registry == null) {
            return;
        }
        durations[op == Op.READ ? 1 : 0][sizeClass(bytes)].record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A transfer failed with {@code cause}. */
    void failed(Throwable cause) {
        if (registry == null) {
            return;
        }
        failures[cause(cause)].increment();
    }

    /** A volume write ({@code write}) or read of {@code bytes} succeeded {@code nanos} after it was started. */
    void volumeCompleted(boolean write, long bytes, long nanos) {
        if (registry == null) {
            return;
        }
        volumeDurations[write ? 0 : 1][sizeClass(bytes)].record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A volume write or read failed with {@code cause}. */
    void volumeFailed(Throwable cause) {
        if (registry == null) {
            return;
        }
        volumeFailures[cause(cause)].increment();
    }

    /** Something of kind {@link #RETRY_CHUNK}, {@link #RETRY_NOTIFICATION} or {@link #RETRY_VERDICT} is sent again. */
    void retried(int kind) {
        if (registry == null) {
            return;
        }
        retries[kind].increment();
    }

    static int sizeClass(long bytes) {
        int c = 0;
        while (bytes > SIZE_LIMITS[c]) {
            c++;
        }
        return c;
    }

    /** {@return the index in {@link #CAUSES} of a failure} */
    static int cause(Throwable t) {
        if (t instanceof LaneFailureException) {
            return 0;
        } else if (t instanceof PeerLostException) {
            return 1;
        } else if (t instanceof TransferTimeoutException) {
            return 2;
        } else if (t instanceof ChecksumMismatchException) {
            return 3;
        } else if (t instanceof CancellationException) {
            return 4;
        } else if (t instanceof TransferException) {
            return 5;
        }
        return 6;
    }

    /** Removes this engine's meters from the registry (the engine closes); others' stay. */
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
