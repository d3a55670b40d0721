package io.rdma4j.ibverbs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.conformance.EngineBackendConformance;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.EngineBackendProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

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

    /** So that the kit's vectored write runs as a chain of RDMA writes here: a quarter of the 16-deep send queue. */
    @Test
    void vectoredWritesChainAQuarterOfTheSendQueue() {
        assertEquals(4, initiator.writeVectorLimit(0));
        assertEquals(Long.MAX_VALUE, initiator.writeVectorBytes(0));
    }
}
