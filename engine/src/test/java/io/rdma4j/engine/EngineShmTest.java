package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The same engine over libfabric shm: striping reassembles and the tag follows the data. */
class EngineShmTest {
    @Test
    void writesOverShmLanesAndNotifies() throws Exception {
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.shm("shm-a", 3).build();
                TransferEngine b = TestEngines.shm("shm-b", 3).build()) {
            MemorySegment dst = TestEngines.allocate(arena, 5 << 20);
            b.publish("landing", b.register(dst), Access.anyPeer());
            MemorySegment src = TestEngines.allocate(arena, 5 << 20);
            TestEngines.fill(src, 3);
            try (LocalBuffer s = a.register(src)) {
                TransferResult r = a.write(
                                s,
                                a.peer(b.name()).buffer("landing"),
                                TransferOptions.tag(3).withCrc32c())
                        .join();
                assertEquals(3, r.lanesUsed().size());
                Notification n = b.awaitTag(3, Duration.ofSeconds(10));
                assertNotNull(n);
                assertEquals(Notification.Checksum.VERIFIED, n.checksum());
                assertEquals(-1, TestEngines.mismatch(src, 0, dst, 0, src.byteSize()));
                MemorySegment back = TestEngines.allocate(arena, 5 << 20);
                try (LocalBuffer bk = a.register(back)) {
                    a.read(bk, a.peer(b.name()).buffer("landing")).join();
                    assertEquals(-1, TestEngines.mismatch(src, 0, back, 0, src.byteSize()));
                }
            }
        }
    }
}
