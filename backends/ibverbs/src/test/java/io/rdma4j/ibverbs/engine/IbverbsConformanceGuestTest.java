package io.rdma4j.ibverbs.engine;

import io.rdma4j.conformance.EngineBackendConformance;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.EngineBackendProvider;
import org.junit.jupiter.api.Tag;

/** The backend conformance kit, unchanged, on RC queue pairs over Soft-RoCE (two lanes on rxe0) in the test VM. */
@Tag("testvm")
class IbverbsConformanceGuestTest extends EngineBackendConformance {
    @Override
    protected EngineBackendProvider provider() {
        return new IbverbsEngineProvider();
    }

    @Override
    protected BackendConfig config() {
        return config("rxe0", 2, BackendOptions.DEFAULTS);
    }
}
