package io.rdma4j.libfabric.engine;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.libfabric.Libfabric;

/** Registers the libfabric engine backend with {@link java.util.ServiceLoader}. */
public final class LibfabricEngineProvider implements EngineBackendProvider {
    @Override
    public String name() {
        return "libfabric";
    }

    @Override
    public int priority() {
        return 10;
    }

    @Override
    public boolean isAvailable() {
        return Libfabric.isAvailable();
    }

    @Override
    public String unavailabilityCause() {
        Throwable t = Libfabric.unavailabilityCause();
        return t == null ? null : t.getMessage();
    }

    @Override
    public EngineBackend open(BackendConfig config) {
        return LibfabricEngineBackend.open(config);
    }
}
