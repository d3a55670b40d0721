package io.rdma4j.rendezvous;

import io.grpc.Server;
import io.rdma4j.rendezvous.internal.HandshakeService;
import io.rdma4j.rendezvous.internal.Transport;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * An engine's {@code rdma4j.v1.Handshake} service around its {@link HandshakeHandler}. Put {@link #address()} in the
 * {@link PeerInfo#handshakeAddress()} you announce.
 *
 * <pre>{@code
 * try (HandshakeServer hs = HandshakeServer.builder("trainer-0", generation, handler).security(sec).start()) {
 *     rendezvous.announce(new PeerInfo("trainer-0", hs.address(), host, generation, lanes), lease);
 * }
 * }</pre>
 */
public final class HandshakeServer implements AutoCloseable {
    private final Server server;
    private final HandshakeService service;
    private final String address;
    private final String description;

    private HandshakeServer(Builder b) {
        if (b.bindNamesToCertificates && (!b.security.serverTls() || b.security.trustedCertificates() == null)) {
            throw new IllegalArgumentException(
                    "binding peer names to certificates needs mutual TLS: Security.withCertificate(...) and withTrustedCertificates(clientCa)");
        }
        this.service =
                new HandshakeService(b.localName, b.generation, b.handler, b.maxInitiators, b.bindNamesToCertificates);
        Transport.Started s = Transport.start(
                new Transport.Listen(b.inProcessName, b.bindAddress, b.port, b.advertiseHost), b.security, service);
        this.server = s.server();
        this.address = s.target();
        this.description = s.description();
    }

    /**
     * @param localName this peer's name (requests addressed to another name are refused)
     * @param generation this process's generation ({@link PeerInfo#newGeneration()})
     * @param handler the engine's endpoint logic
     */
    public static Builder builder(String localName, long generation, HandshakeHandler handler) {
        return new Builder(localName, generation, handler);
    }

    /**
     * @return where peers reach this server: {@code host:port} (for a wildcard bind, the advertised host or this
     *     machine's host name) or {@code inproc:NAME}
     */
    public String address() {
        return address;
    }

    public String description() {
        return description;
    }

    /**
     * Forgets the connection state of {@code initiator} (call it when the peer leaves, e.g. on a
     * {@link PeerEvent.Kind#LEFT} event), so the server remembers only live peers.
     */
    public void forget(String initiator) {
        service.forget(initiator);
    }

    /**
     * Forgets the connection state of every initiator (call it when this peer's own lease lapsed: the others saw it
     * leave and dropped theirs), so that each one's next connect pairs afresh.
     */
    public void forgetAll() {
        service.forgetAll();
    }

    /**
     * Answers every initiator's next connect afresh, even one that repeats its last (call it when this peer announces
     * itself again: an initiator that saw its lease lapse dropped what the last answer gave it). The state stays until
     * then.
     */
    public void renewSessions() {
        service.renewSessions();
    }

    /** @return initiators whose connection state is remembered */
    public int initiators() {
        return service.initiators();
    }

    @Override
    public void close() {
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

    /** Configuration of a {@link HandshakeServer}. */
    public static final class Builder {
        private final String localName;
        private final long generation;
        private final HandshakeHandler handler;
        private String inProcessName;
        private String bindAddress;
        private int port;
        private String advertiseHost;
        private Security security = Security.none();
        private boolean bindNamesToCertificates;
        private int maxInitiators = 65_536;

        private Builder(String localName, long generation, HandshakeHandler handler) {
            Rendezvous.checkName("local peer name", localName);
            this.localName = localName;
            this.generation = generation;
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /** TCP port; 0 (the default) picks a free one. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** Address to bind; default loopback without a token, all interfaces with one. */
        public Builder bindAddress(String address) {
            this.bindAddress = address;
            return this;
        }

        /**
         * The host peers dial when the server binds all interfaces (the default with a token); by default this
         * machine's host name. Ignored for a specific bind address, which is advertised as is.
         */
        public Builder advertiseHost(String host) {
            this.advertiseHost = Objects.requireNonNull(host);
            return this;
        }

        /** Serve in-process under {@code name} (address {@code inproc:name}), for engines that all run in one JVM. */
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

        /** Distinct initiators remembered at once; more get RESOURCE_EXHAUSTED. */
        public Builder maxInitiators(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxInitiators must be >= 1, got " + n);
            }
            this.maxInitiators = n;
            return this;
        }

        public HandshakeServer start() {
            return new HandshakeServer(this);
        }
    }
}
