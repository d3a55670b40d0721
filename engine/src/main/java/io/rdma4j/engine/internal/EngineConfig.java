package io.rdma4j.engine.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.rendezvous.Security;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/** Everything {@link io.rdma4j.engine.TransferEngine.Builder} collected, validated in {@link EngineCore#open}. */
public record EngineConfig(
        String name,
        String backend,
        String provider,
        String directory,
        Security security,
        String nicFilter,
        int lanesPerNic,
        long chunkBytes,
        long smallThreshold,
        int queueDepth,
        int progressThreads,
        boolean busySpin,
        int maxRetries,
        Duration cooldown,
        Duration maxCooldown,
        Duration lease,
        Duration rendezvousDeadline,
        Path topology,
        Map<Integer, Double> laneWeights,
        UnaryOperator<EngineBackend> backendWrapper,
        MeterRegistry meterRegistry) {}
