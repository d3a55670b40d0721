package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.rendezvous.DirectoryServer;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The examples run for real over libfabric (shm and tcp on loopback). */
class ExamplesTest {
    static final AtomicInteger SEQ = new AtomicInteger();

    @Test
    void weightSyncDeliversEveryVersionToBothWorkers() throws Exception {
        int verified = WeightSync.run(
                role -> TransferEngine.builder()
                        .name("ws-" + role + "-" + SEQ.incrementAndGet())
                        .provider("tcp")
                        .nicFilter("lo")
                        .lanesPerNic(2)
                        .chunkSize(64 << 10)
                        .build(),
                6,
                50_000,
                4);
        assertEquals(8, verified);
    }

    @Test
    void seedOneSidedWriteBetweenTwoRanks() throws Exception {
        try (DirectoryServer directory = DirectoryServer.builder().port(0).start()) {
            var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
                Future<Integer> r1 = pool.submit(() -> OneSidedWrite.rank(1, directory.target(), "shm"));
                Future<Integer> r0 = pool.submit(() -> OneSidedWrite.rank(0, directory.target(), "shm"));
                assertEquals(0, r0.get());
                assertEquals(0, r1.get());
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
