package io.rdma4j.rendezvous;

import io.grpc.Server;
import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.Closeables;
import io.rdma4j.rendezvous.internal.DirectoryMetrics;
import io.rdma4j.rendezvous.internal.DirectoryService;
import io.rdma4j.rendezvous.internal.MemoryStore;
import io.rdma4j.rendezvous.internal.Transport;
import io.rdma4j.rendezvous.store.DirectoryStore;
import io.rdma4j.rendezvous.store.DirectoryStores;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A running {@code rdma4j.v1.Directory}: over TCP ({@code ./rdma4j rendezvous}) or in-process. Clients reach it with
 * {@link Rendezvous#connect(String, Security)} at {@link #target()}.
 *
 * <pre>{@code
 * try (DirectoryServer d = DirectoryServer.builder().port(7777).security(Security.token(t)).start()) { ... }
 * }</pre>
 */
public final class DirectoryServer implements AutoCloseable {
    private final Server server;
    private final DirectoryService service;
    private final DirectoryStore store;
    private final DirectoryMetrics metrics;
    private final ScheduledExecutorService sweeper;
    private final String target;
    private final String description;
    private final boolean loopbackOnly;

    private DirectoryServer(Builder b) {
        if (b.bindNamesToCertificates && (!b.security.serverTls() || b.security.trustedCertificates() == null)) {
            throw new IllegalArgumentException(
                    "binding peer names to certificates needs mutual TLS: Security.withCertificate(...) and withTrustedCertificates(clientCa)");
        }
        this.store = b.storeUrl == null ? new MemoryStore(b.clock) : DirectoryStores.open(b.storeUrl);
        this.metrics = DirectoryMetrics.create(b.meterRegistry, store);
        this.service = new DirectoryService(b.limits(), store, b.bindNamesToCertificates, metrics);
        Transport.Started s;
        try {
            s = Transport.start(
                    new Transport.Listen(b.inProcessName, b.bindAddress, b.port, null), b.security, service);
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, metrics::close, store::close);
        }
        this.server = s.server();
        this.target = s.target();
        this.description = s.description();
        this.loopbackOnly = s.loopbackOnly();
        if (b.sweepInterval.isZero()) {
            this.sweeper = null;
        } else {
            this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "rdma4j-directory-leases");
                t.setDaemon(true);
                return t;
            });
            long ms = Math.max(1, b.sweepInterval.toMillis());
            sweeper.scheduleWithFixedDelay(service::expireLeases, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * @return what clients pass to {@link Rendezvous#connect}: {@code host:port} (this machine's host name when bound
     *     to all interfaces) or {@code inproc:NAME}
     */
    public String target() {
        return target;
    }

    /** @return the TCP port, or -1 for an in-process server */
    public int port() {
        return target.startsWith(Transport.IN_PROCESS_PREFIX)
                ? -1
                : Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
    }

    /** @return where and how it listens, e.g. {@code 127.0.0.1:7777 (plaintext, no token: loopback only)} */
    public String description() {
        return description;
    }

    /** @return where the state is kept: {@code in memory}, {@code etcd at ...} */
    public String storeDescription() {
        return store.describe();
    }

    /** @return whether only this machine can reach it */
    public boolean loopbackOnly() {
        return loopbackOnly;
    }

    /**
     * Removes the peers whose leases ran out now (also done periodically unless the sweep interval is zero). @return
     * how many
     */
    public int expireLeases() {
        return service.expireLeases();
    }

    /** @return peers held, expired ones not yet swept included */
    public int peerCount() {
        return service.peerCount();
    }

    /** @return buffers held */
    public int bufferCount() {
        return service.bufferCount();
    }

    /** Blocks until the server is shut down (by {@link #close()} or JVM exit). */
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    /**
     * Stops serving; watch streams end with UNAVAILABLE. A shared store keeps its announcements until their leases run
     * out. Idempotent.
     */
    @Override
    public void close() {
        if (sweeper != null) {
            sweeper.shutdownNow();
        }
        Closeables.closeAll(service::closeWatchers, this::stopServer, metrics::close, store::close);
    }

    private void stopServer() {
        server.shutdown();
        try {
            if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    /** Configuration of a {@link DirectoryServer}. */
    public static final class Builder {
        private String inProcessName;
        private String bindAddress;
        private int port;
        private Security security = Security.none();
        private boolean bindNamesToCertificates;
        private LongSupplier clock = System::nanoTime;
        private String storeUrl;
        private Duration sweepInterval = Duration.ofMillis(250);
        private Duration minLease = Duration.ofNanos(DirectoryService.Limits.DEFAULT.minLeaseNanos());
        private Duration maxLease = Duration.ofNanos(DirectoryService.Limits.DEFAULT.maxLeaseNanos());
        private Duration defaultLease = Duration.ofNanos(DirectoryService.Limits.DEFAULT.defaultLeaseNanos());
        private int maxPeers = DirectoryService.Limits.DEFAULT.maxPeers();
        private int maxBuffers = DirectoryService.Limits.DEFAULT.maxBuffers();
        private int maxBuffersPerPeer = DirectoryService.Limits.DEFAULT.maxBuffersPerPeer();
        private int maxWatchers = DirectoryService.Limits.DEFAULT.maxWatchers();
        private MeterRegistry meterRegistry;

        private Builder() {}

        /** TCP port; 0 (the default) picks a free one. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** Address to bind; default loopback without a token, all interfaces with one. Non-loopback needs a token. */
        public Builder bindAddress(String address) {
            this.bindAddress = address;
            return this;
        }

        /** Serve in-process under {@code name} instead of TCP (target {@code inproc:name}). */
        public Builder inProcess(String name) {
            this.inProcessName = Objects.requireNonNull(name);
            return this;
        }

        public Builder security(Security security) {
            this.security = Objects.requireNonNull(security);
            return this;
        }

        /**
         * Accepts a peer name only from a caller whose mutual-TLS client certificate carries it (subject CN or DNS
         * name, exactly or followed by {@code /suffix}). Without this, every token holder may act under any name; with
         * it, a buffer's access list names certified identities. Needs mutual TLS.
         */
        public Builder bindNamesToCertificates() {
            this.bindNamesToCertificates = true;
            return this;
        }

        /** Monotonic nanoseconds for leases ({@code System::nanoTime} by default); tests pass one they advance. */
        public Builder clock(LongSupplier nanos) {
            this.clock = Objects.requireNonNull(nanos);
            return this;
        }

        /**
         * Keeps the state in a shared store instead of this process's memory, e.g.
         * {@code etcd://10.0.0.1:2379,10.0.0.2:2379} (needs {@code rdma4j-rendezvous-etcd} on the class path). Any
         * number of directory servers may serve one store; they hold no state of their own.
         */
        public Builder store(String url) {
            this.storeUrl = Objects.requireNonNull(url, "url");
            return this;
        }

        /**
         * How often expired leases are swept; {@link Duration#ZERO} sweeps only on
         * {@link DirectoryServer#expireLeases()}.
         */
        public Builder sweepInterval(Duration interval) {
            this.sweepInterval = Objects.requireNonNull(interval);
            return this;
        }

        /** Leases granted are clamped to {@code [min, max]}; a peer asking for none gets {@code defaultLease}. */
        public Builder leases(Duration min, Duration defaultLease, Duration max) {
            if (min.isNegative()
                    || min.isZero()
                    || min.compareTo(defaultLease) > 0
                    || defaultLease.compareTo(max) > 0
                    || max.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("leases need 0 < min <= default <= max < 2^31 ms, got " + min + ", "
                        + defaultLease + ", " + max);
            }
            this.minLease = min;
            this.defaultLease = defaultLease;
            this.maxLease = max;
            return this;
        }

        /**
         * Publishes the directory's meters in {@code registry}: {@code rdma4j.directory.resolves} (peer resolves and
         * buffer lookups, tagged {@code kind} and {@code outcome}), {@code rdma4j.directory.leases} (tagged
         * {@code event}: granted, renewed, withdrawn, expired), and the gauges {@code rdma4j.directory.leases.active}
         * and {@code rdma4j.directory.buffers}. They leave the registry when the server closes.
         *
         * @param registry where the meters go; null (the default) for none
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meterRegistry = registry;
            return this;
        }

        /** Capacity limits; beyond them calls get RESOURCE_EXHAUSTED. */
        public Builder capacity(int maxPeers, int maxBuffers, int maxBuffersPerPeer, int maxWatchers) {
            if (maxPeers < 1 || maxBuffers < 0 || maxBuffersPerPeer < 0 || maxWatchers < 0) {
                throw new IllegalArgumentException("capacity limits must be positive");
            }
            this.maxPeers = maxPeers;
            this.maxBuffers = maxBuffers;
            this.maxBuffersPerPeer = maxBuffersPerPeer;
            this.maxWatchers = maxWatchers;
            return this;
        }

        DirectoryService.Limits limits() {
            return new DirectoryService.Limits(
                    minLease.toNanos(),
                    maxLease.toNanos(),
                    defaultLease.toNanos(),
                    maxPeers,
                    maxBuffers,
                    maxBuffersPerPeer,
                    maxWatchers,
                    DirectoryService.Limits.DEFAULT.maxWatchBacklog());
        }

        /**
         * Binds and starts serving.
         *
         * @throws IllegalArgumentException for a non-loopback bind without a token or unreadable TLS files
         * @throws io.rdma4j.Rdma4jException when the port cannot be bound (message says why)
         */
        public DirectoryServer start() {
            return new DirectoryServer(this);
        }
    }
}
