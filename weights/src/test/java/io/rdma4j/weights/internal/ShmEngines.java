package io.rdma4j.weights.internal;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.Security;
import java.time.Duration;

/** Engines for the tests of this package: libfabric shm, a 3 s lease (a closed peer is known gone soon). */
final class ShmEngines {
    private ShmEngines() {}

    static TransferEngine engine(String name, String directory) {
        return TransferEngine.builder()
                .name(name)
                .backend("libfabric")
                .provider("shm")
                .directory(directory, Security.none())
                .lease(Duration.ofSeconds(3))
                .build();
    }
}
