package io.rdma4j.rendezvous.internal;

import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.rendezvous.store.DirectoryStore;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A directory's meters: resolves of peers and lookups of buffers by outcome, leases granted, renewed, withdrawn and
 * expired, and the leases and buffers held. {@link #OFF} when the server was built without a registry.
 */
public final class DirectoryMetrics {
    /** No registry: every call returns at once. */
    public static final DirectoryMetrics OFF = new DirectoryMetrics(null, null);

    private final MeterRegistry registry;
    private final List<Meter> meters = new CopyOnWriteArrayList<>();
    /** Resolve counters by kind and outcome, registered on first use (an outcome may never happen). */
    private final Map<String, Counter> resolves = new ConcurrentHashMap<>();

    private final Counter granted;
    private final Counter renewed;
    private final Counter withdrawn;
    private final Counter expired;

    private DirectoryMetrics(MeterRegistry registry, DirectoryStore store) {
        this.registry = registry;
        if (registry == null) {
            granted = renewed = withdrawn = expired = null;
            return;
        }
        granted = lease("granted", "Announcements answered with a lease");
        renewed = lease("renewed", "Heartbeats that renewed a lease");
        withdrawn = lease("withdrawn", "Leases ended by their peer withdrawing");
        expired = lease("expired", "Leases that ran out and were swept by this server");
        meters.add(Gauge.builder("rdma4j.directory.leases.active", store, DirectoryStore::peerCount)
                .description("Peers holding a lease (expired ones not yet swept included)")
                .register(registry));
        meters.add(Gauge.builder("rdma4j.directory.buffers", store, DirectoryStore::bufferCount)
                .description("Buffers published")
                .register(registry));
        // the common outcomes are there from the start, at 0
        for (String kind : List.of("peer", "buffer")) {
            resolves(kind, Status.Code.OK);
            resolves(kind, Status.Code.NOT_FOUND);
        }
    }

    /**
     * Registers a directory's meters in {@code registry}.
     *
     * @param registry where they go; null gives {@link #OFF}
     * @param store the directory's store, whose peers and buffers the gauges count
     */
    public static DirectoryMetrics create(MeterRegistry registry, DirectoryStore store) {
        return registry == null ? OFF : new DirectoryMetrics(registry, store);
    }

    private Counter lease(String event, String description) {
        Counter c = Counter.builder("rdma4j.directory.leases")
                .description(description)
                .tag("event", event)
                .register(registry);
        meters.add(c);
        return c;
    }

    /**
     * A resolve of a peer or a lookup of a buffer was answered.
     *
     * @param kind {@code peer} or {@code buffer}
     * @param outcome the status it was answered with
     */
    void resolved(String kind, Status.Code outcome) {
        if (registry == null) {
            return;
        }
        resolves(kind, outcome).increment();
    }

    private Counter resolves(String kind, Status.Code outcome) {
        return resolves.computeIfAbsent(kind + "/" + outcome, k -> {
            Counter c = Counter.builder("rdma4j.directory.resolves")
                    .description("Resolves of peers and lookups of buffers, by outcome")
                    .tag("kind", kind)
                    .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                    .register(registry);
            meters.add(c);
            return c;
        });
    }

    /** An announce was answered with {@code code}: a lease was granted when it is OK. */
    void announced(Status.Code code) {
        count(granted, code);
    }

    /** A heartbeat was answered with {@code code}: a lease was renewed when it is OK. */
    void heartbeat(Status.Code code) {
        count(renewed, code);
    }

    /** A withdraw was answered with {@code code}: a lease ended when it is OK. */
    void withdrew(Status.Code code) {
        count(withdrawn, code);
    }

    /** This server swept {@code n} expired leases. */
    void expired(int n) {
        if (registry != null && n > 0) {
            expired.increment(n);
        }
    }

    private void count(Counter c, Status.Code code) {
        if (registry != null && code == Status.Code.OK) {
            c.increment();
        }
    }

    /** Removes the meters from the registry (the server closes). */
    public void close() {
        if (registry == null) {
            return;
        }
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
        resolves.clear();
    }
}
