package io.rdma4j.libfabric.engine;

import io.rdma4j.conformance.EngineBackendConformance;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.EngineBackendProvider;

/** The backend conformance kit on libfabric shm. */
class LibfabricShmConformanceTest extends EngineBackendConformance {
    @Override
    protected EngineBackendProvider provider() {
        return new LibfabricEngineProvider();
    }

    @Override
    protected BackendConfig config() {
        return config("shm", 2, BackendOptions.DEFAULTS);
    }

    /** Measured here: libfabric 1.17's shm lets a write with a wrong key land (it copies by virtual address). */
    @Override
    protected boolean enforcesKeys() {
        return false;
    }

    /** Measured here: libfabric 1.17's shm provider crashes (pthread_spin_lock) writing to a peer closed in-process. */
    @Override
    protected boolean postsToAClosedPeerAreSafe() {
        return false;
    }
}
