package io.rdma4j.engine.internal;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** Checks an engine's configuration and opens the backend it selects (by name, or the best available for "auto"). */
final class BackendSelection {
    private BackendSelection() {}

    /**
     * Checks the builder's settings, which are arguments too: one type for every bad argument (see
     * {@link io.rdma4j.Rdma4jException}), its message naming the {@code TransferEngine.Builder} setting to fix.
     *
     * @throws InvalidArgumentException on the first setting out of range
     */
    static void validate(EngineConfig c) {
        if (c.name() != null && !Names.valid(c.name())) {
            throw bad("name", "engine name '" + c.name() + "' must match " + Names.RULE);
        }
        if (c.chunkBytes() < 4096 || c.chunkBytes() > (1L << 30)) {
            throw bad("chunkSize", "chunk size must be 4 KiB..1 GiB, got " + c.chunkBytes());
        }
        if (c.smallThreshold() < 0) {
            throw bad("smallTransferThreshold", "small-transfer threshold must be >= 0, got " + c.smallThreshold());
        }
        if (c.queueDepth() < 2 || c.queueDepth() > 4096) {
            throw bad("queueDepth", "queue depth must be 2..4096, got " + c.queueDepth());
        }
        if (c.progressThreads() < 1 || c.progressThreads() > 64) {
            throw bad("progressThreads", "progress threads must be 1..64, got " + c.progressThreads());
        }
        if (c.lanesPerNic() < 1 || c.lanesPerNic() > 16) {
            throw bad("lanesPerNic", "lanes per NIC must be 1..16, got " + c.lanesPerNic());
        }
        if (c.maxRetries() < 0 || c.maxRetries() > 100) {
            throw bad("maxRetries", "max retries must be 0..100, got " + c.maxRetries());
        }
        if (c.rendezvousDeadline().compareTo(Duration.ofMillis(100)) < 0
                || c.rendezvousDeadline().compareTo(Duration.ofMinutes(10)) > 0) {
            throw bad(
                    "rendezvousDeadline", "rendezvous deadline must be 100 ms..10 min, got " + c.rendezvousDeadline());
        }
        for (var w : c.laneWeights().entrySet()) {
            if (!(w.getValue() > 0)) {
                throw bad("laneWeight", "lane " + w.getKey() + " weight must be > 0, got " + w.getValue());
            }
        }
    }

    private static InvalidArgumentException bad(String setting, String what) {
        return new InvalidArgumentException(what + ": fix TransferEngine.Builder." + setting + "()");
    }

    static EngineBackend open(EngineConfig c) {
        List<EngineBackendProvider> all = new ArrayList<>();
        ServiceLoader.load(EngineBackendProvider.class, BackendSelection.class.getClassLoader())
                .forEach(all::add);
        all.sort(Comparator.comparingInt(EngineBackendProvider::priority).reversed());
        StringBuilder why = new StringBuilder();
        for (EngineBackendProvider p : all) {
            if (!c.backend().equals("auto") && !c.backend().equalsIgnoreCase(p.name())) {
                continue;
            }
            if (!p.isAvailable()) {
                why.append("; ").append(p.name()).append(": ").append(p.unavailabilityCause());
                continue;
            }
            BackendOptions options = BackendOptions.DEFAULTS.withNicFilter(c.nicFilter());
            try {
                return p.open(new BackendConfig(c.provider(), c.lanesPerNic(), c.queueDepth(), options));
            } catch (BackendUnavailableException e) {
                if (!c.backend().equals("auto")) {
                    throw e;
                }
                why.append("; ").append(p.name()).append(": ").append(e.getMessage());
            }
        }
        if (all.isEmpty()) {
            throw new BackendUnavailableException(
                    "no engine backend on the class path: add rdma4j-libfabric"
                            + " (or rdma4j-ibverbs) as a dependency",
                    null);
        }
        String none = "no usable engine backend for '" + c.backend() + "'";
        if (why.isEmpty()) {
            throw new BackendUnavailableException(
                    none + " (known: "
                            + all.stream().map(EngineBackendProvider::name).toList()
                            + "): pass one of them, or \"auto\", to TransferEngine.Builder.backend()",
                    null);
        }
        throw new BackendUnavailableException(
                none + why + ". Each reason is the backend's"
                        + " EngineBackendProvider.unavailabilityCause() or what its open() threw;"
                        + " Libfabric.unavailabilityCause()"
                        + " and Verbs.unavailabilityCause() probe the native libraries alone",
                null);
    }
}
