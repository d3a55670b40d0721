package io.rdma4j.nvmeof.engine;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.engine.spi.BlockStore;
import io.rdma4j.engine.spi.BlockStoreProvider;
import io.rdma4j.engine.spi.BlockTarget;
import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.HostIdentity;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.Target;
import io.rdma4j.nvmeof.rdma.RdmaQueue;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * The engine's way to NVMe over Fabrics: connects a {@link Controller} per target. Options (all optional, as strings):
 * {@code ioQueues}, {@code queueDepth}, {@code keepAliveMs}, {@code connectTimeoutMs}, {@code ioTimeoutMs},
 * {@code headerDigest}, {@code dataDigest}, {@code polledIo} (true/false; over TCP each I/O queue runs on the polled
 * data path, one thread a queue, unless false), {@code identityDir} (where the host NQN and ID persist; default
 * {@code ~/.config/rdma4j}), {@code hostNqn} and {@code hostId} (override the persisted ones).
 */
public final class NvmeofBlockStoreProvider implements BlockStoreProvider {
    static final Set<String> OPTIONS = new TreeSet<>(Set.of(
            "ioQueues",
            "queueDepth",
            "keepAliveMs",
            "connectTimeoutMs",
            "ioTimeoutMs",
            "headerDigest",
            "dataDigest",
            "identityDir",
            "hostNqn",
            "hostId",
            "polledIo"));

    @Override
    public String name() {
        return "nvmeof";
    }

    @Override
    public Set<String> transports() {
        return Set.of("tcp", "rdma");
    }

    @Override
    public String unavailabilityCause(String transport) {
        return switch (transport) {
            case "tcp" -> null;
            case "rdma" -> {
                try {
                    RdmaQueue.requireRdma("the target");
                    yield null;
                } catch (NvmeException | LinkageError e) {
                    yield e.getMessage();
                }
            }
            default -> "NVMe-oF here speaks tcp and rdma, not '" + transport + "'";
        };
    }

    @Override
    public BlockStore connect(BlockTarget target, Map<String, String> options, InetAddress sourceAddress) {
        return connect(target, options, sourceAddress, null);
    }

    /** Connects as the three-argument form, with the controller's per-queue meters in {@code registry}. */
    @Override
    public BlockStore connect(
            BlockTarget target, Map<String, String> options, InetAddress sourceAddress, MeterRegistry registry) {
        Target t = switch (target.transport()) {
            case "tcp" -> Target.tcp(target.host(), target.port());
            case "rdma" -> Target.rdma(target.host(), target.port());
            default ->
                throw new IllegalArgumentException(
                        "transport '" + target.transport() + "' of " + target + ": NVMe-oF here speaks tcp and rdma");
        };
        ConnectOptions o = options(options).withSourceAddress(sourceAddress);
        return new NvmeofBlockStore(Controller.connect(t, target.subsystemNqn(), o, registry), sourceAddress);
    }

    /** Parses the engine's string options into connect options; unknown keys and bad values throw, naming the fix. */
    static ConnectOptions options(Map<String, String> options) {
        // volumes move large pieces from many threads: each TCP I/O queue runs on the polled data path, one thread
        // a queue, which sends every piece waiting in one call and answers R2Ts without a hand-off
        ConnectOptions o = ConnectOptions.defaults().withPolledIo(true);
        String hostNqn = null;
        String hostId = null;
        for (Map.Entry<String, String> e : options.entrySet()) {
            String k = e.getKey();
            String v = e.getValue();
            o = switch (k) {
                case "ioQueues" -> o.withIoQueues(integer(k, v));
                case "queueDepth" -> o.withQueueDepth(integer(k, v));
                case "keepAliveMs" -> o.withKeepAlive(Duration.ofMillis(integer(k, v)));
                case "connectTimeoutMs" -> o.withConnectTimeout(Duration.ofMillis(integer(k, v)));
                case "ioTimeoutMs" -> o.withIoTimeout(Duration.ofMillis(integer(k, v)));
                case "headerDigest" -> o.withDigests(bool(k, v), o.dataDigest());
                case "dataDigest" -> o.withDigests(o.headerDigest(), bool(k, v));
                case "polledIo" -> o.withPolledIo(bool(k, v));
                case "identityDir" -> o.withIdentity(HostIdentity.persistent(Path.of(v)));
                case "hostNqn" -> {
                    hostNqn = v;
                    yield o;
                }
                case "hostId" -> {
                    hostId = v;
                    yield o;
                }
                default ->
                    throw new IllegalArgumentException(
                            "unknown NVMe-oF volume option '" + k + "': the known ones are " + OPTIONS);
            };
        }
        if (hostNqn != null || hostId != null) {
            HostIdentity base = o.resolvedIdentity();
            UUID id;
            try {
                id = hostId != null ? UUID.fromString(hostId) : base.id();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("NVMe-oF volume option hostId=" + hostId + " is not a UUID");
            }
            o = o.withIdentity(new HostIdentity(hostNqn != null ? hostNqn : base.nqn(), id));
        }
        return o;
    }

    private static int integer(String key, String value) {
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("NVMe-oF volume option " + key + "=" + value + " is not a whole number");
        }
    }

    private static boolean bool(String key, String value) {
        return switch (value.strip()) {
            case "true" -> true;
            case "false" -> false;
            default ->
                throw new IllegalArgumentException(
                        "NVMe-oF volume option " + key + "=" + value + " must be true or false");
        };
    }
}
