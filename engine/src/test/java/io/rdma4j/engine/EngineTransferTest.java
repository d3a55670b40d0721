package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two engines over libfabric tcp with four lanes each: striping, notifications, read, batch. */
class EngineTransferTest {
    static final long MIB = 1 << 20;
    static Arena arena;
    static TransferEngine a;
    static TransferEngine b;
    static MemorySegment bMem;
    static LocalBuffer bBuf;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        a = TestEngines.tcp("xfer-a", 4).build();
        b = TestEngines.tcp("xfer-b", 4).build();
        bMem = TestEngines.allocate(arena, 8 * MIB);
        bBuf = b.register(bMem);
        b.publish("landing", bBuf, Access.anyPeer());
    }

    @AfterAll
    static void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        arena.close();
    }

    @Test
    void writesAcrossFourLanesAndReassembles() throws Exception {
        MemorySegment src = TestEngines.allocate(arena, 6 * MIB + 12345);
        TestEngines.fill(src, 1);
        try (LocalBuffer s = a.register(src)) {
            RemoteBuffer dst = a.peer(b.name()).buffer("landing");
            Plan plan = a.explain(s, 0, dst, 1000, src.byteSize());
            assertEquals(4, plan.lanes().size(), plan.toText());
            TransferResult r = a.write(s, 0, dst, 1000, src.byteSize(), TransferOptions.tag(77)).join();
            assertEquals(src.byteSize(), r.bytes());
            assertEquals(List.of(0, 1, 2, 3), r.lanesUsed());
            Notification n = b.awaitTag(77, Duration.ofSeconds(10));
            assertNotNull(n, "notification 77 never arrived");
            assertEquals(a.name(), n.peer());
            assertEquals("landing", n.buffer());
            assertEquals(1000, n.offset());
            assertEquals(src.byteSize(), n.length());
            assertEquals(-1, TestEngines.mismatch(src, 0, bMem, 1000, src.byteSize()));
            assertNull(b.awaitTag(77, Duration.ofMillis(200)), "the tag was delivered twice");
        }
    }
}
