package io.rdma4j.engine.spi;

import java.util.Objects;

/**
 * What the engine asks of a backend when it opens it.
 *
 * @param provider a backend-specific choice of transport (libfabric provider such as {@code tcp} or {@code shm});
 *     {@code null} lets the backend pick its best
 * @param lanesPerDevice how many endpoints or queue pairs to open per device (at least 1)
 * @param queueDepth how many operations the engine keeps in flight per lane (at least 1)
 * @param options further settings, typed and documented in {@link BackendOptions}; {@code null} means
 *     {@link BackendOptions#DEFAULTS}
 */
public record BackendConfig(String provider, int lanesPerDevice, int queueDepth, BackendOptions options) {
    public BackendConfig {
        if (lanesPerDevice < 1 || lanesPerDevice > 64) {
            throw new IllegalArgumentException("lanesPerDevice must be 1..64, got " + lanesPerDevice);
        }
        if (queueDepth < 1 || queueDepth > 65536) {
            throw new IllegalArgumentException("queueDepth must be 1..65536, got " + queueDepth);
        }
        options = Objects.requireNonNullElse(options, BackendOptions.DEFAULTS);
    }

    /** A configuration with {@link BackendOptions#DEFAULTS}. */
    public BackendConfig(String provider, int lanesPerDevice, int queueDepth) {
        this(provider, lanesPerDevice, queueDepth, BackendOptions.DEFAULTS);
    }
}
