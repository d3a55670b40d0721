package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.TransferEngine;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import org.junit.jupiter.api.Test;

/** A control write that cannot go is dropped, as its contract says, but counted and named: real engine over shm. */
class ControlWritesTest {
    @Test
    void aWriteToAPublisherNobodyKnowsIsCountedAndNamed() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine engine = TransferEngine.builder()
                        .name("control-writes-" + ProcessHandle.current().pid())
                        .backend("libfabric")
                        .provider("shm")
                        .directory(dir.target(), Security.none())
                        .build()) {
            ControlWrites c = new ControlWrites(engine, engine.register(arena.allocate(8, 8)), "control");
            assertEquals(0, c.failures());
            assertNull(c.lastFailure());
            c.send("no-such-trainer", 0x1234);
            c.awaitSent();
            assertEquals(1, c.failures());
            assertTrue(c.lastFailure().startsWith("to no-such-trainer (tag 0x1234): "), c.lastFailure());
        }
    }
}
