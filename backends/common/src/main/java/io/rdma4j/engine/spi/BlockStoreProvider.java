package io.rdma4j.engine.spi;

import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.util.Map;
import java.util.Set;

/**
 * Entry point of a block-storage backend the engine writes to and reads from (remote NVMe namespaces), found through
 * {@link java.util.ServiceLoader} ({@code META-INF/services/io.rdma4j.engine.spi.BlockStoreProvider}). Probing
 * ({@link #isAvailable}, {@link #unavailabilityCause}) never throws.
 */
public interface BlockStoreProvider {
    /** @return the provider's name, e.g. {@code nvmeof} */
    String name();

    /** @return transports it speaks, lower case, e.g. {@code tcp} and {@code rdma} */
    Set<String> transports();

    /** @return whether {@link #connect} can work on this machine for {@code transport} */
    default boolean isAvailable(String transport) {
        return unavailabilityCause(transport) == null;
    }

    /** @return why {@code transport} cannot be used here and what to install, or {@code null} when it can */
    String unavailabilityCause(String transport);

    /**
     * Connects to a storage controller.
     *
     * @param target where it listens and which subsystem
     * @param options provider settings (for NVMe-oF: {@code ioQueues}, {@code queueDepth}, {@code hostNqn}, ...); an
     *     unknown key throws {@link IllegalArgumentException} naming the known ones
     * @param sourceAddress local address of the NIC to leave by; {@code null} lets the kernel route
     * @throws io.rdma4j.Rdma4jException when the target cannot be reached or refuses
     */
    BlockStore connect(BlockTarget target, Map<String, String> options, InetAddress sourceAddress);

    /**
     * As {@link #connect(BlockTarget, Map, InetAddress)}, publishing the store's meters (for NVMe-oF: per-queue command
     * latency, whose rate is the queue's IOPS, bytes, errors and commands outstanding) in {@code registry} until the
     * store closes. The engine calls this with the registry it was built with. A provider without meters keeps this
     * default, which ignores the registry.
     *
     * @param registry where the meters go; null for none
     */
    default BlockStore connect(
            BlockTarget target, Map<String, String> options, InetAddress sourceAddress, MeterRegistry registry) {
        return connect(target, options, sourceAddress);
    }
}
