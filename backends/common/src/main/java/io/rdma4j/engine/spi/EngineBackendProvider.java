package io.rdma4j.engine.spi;

/**
 * Entry point of a backend, found through {@link java.util.ServiceLoader}
 * ({@code META-INF/services/io.rdma4j.engine.spi.EngineBackendProvider}). Probing ({@link #isAvailable()},
 * {@link #unavailabilityCause()}) never throws.
 */
public interface EngineBackendProvider {
    /**
     * @return the backend's name, e.g. {@code libfabric} or {@code ibverbs}: what
     *     {@code TransferEngine.Builder.backend} selects, and (lower-cased) the backend id its lanes carry on the wire
     */
    String name();

    /** @return preference when the engine picks the best available backend: higher wins */
    int priority();

    /** @return whether {@link #open} can work on this machine */
    boolean isAvailable();

    /** @return why {@link #isAvailable()} is false and what to install, or {@code null} when available */
    String unavailabilityCause();

    /**
     * Opens the backend's devices as lanes.
     *
     * @param config lanes per device, queue depth, an optional provider or device choice
     * @throws io.rdma4j.BackendUnavailableException when the backend cannot load or no device matches
     */
    EngineBackend open(BackendConfig config);
}
