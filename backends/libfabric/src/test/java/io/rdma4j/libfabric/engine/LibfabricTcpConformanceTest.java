package io.rdma4j.libfabric.engine;

import io.rdma4j.conformance.EngineBackendConformance;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.EngineBackendProvider;

/** The backend conformance kit on libfabric tcp (ofi_rxm) over loopback. */
class LibfabricTcpConformanceTest extends EngineBackendConformance {
    @Override
    protected EngineBackendProvider provider() {
        return new LibfabricEngineProvider();
    }

    @Override
    protected BackendConfig config() {
        return config("tcp", 2, BackendOptions.DEFAULTS.withNicFilter("lo"));
    }
}
