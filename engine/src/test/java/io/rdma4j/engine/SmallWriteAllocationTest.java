package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * What a single small write allocates on the calling thread, between two tcp engines of four lanes: its transfer, its
 * future, and the few objects that carry it to a lane (the checked plan, the lane's work item and its queue node, the
 * two in-flight set entries). The lanes are ranked once per peer and reused, not ranked again per write: ranking
 * allocated a candidate per lane, two lists and a lane assignment, about 600 more bytes a write.
 */
class SmallWriteAllocationTest {
    /** The transfer (about 200 B), its future, the plan, a stripe, a queue node and two set nodes, with room. */
    static final long MOST_BYTES = 512;

    @Test
    void aSmallWriteAllocatesItsTransferAndNoRanking() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("alloc-a", 4).build();
                TransferEngine b = TestEngines.tcp("alloc-b", 4).build()) {
            MemorySegment dstMem = TestEngines.allocate(arena, 1 << 20);
            b.publish("sink", b.register(dstMem), Access.anyPeer());
            MemorySegment srcMem = TestEngines.allocate(arena, 1 << 20);
            LocalBuffer src = a.register(srcMem);
            RemoteBuffer dst = a.peer(b.name()).buffer("sink");
            long fewest = Long.MAX_VALUE;
            for (int round = 0; round < 3000; round++) {
                long at = (round % 256) * 4096L;
                long before = threads.getCurrentThreadAllocatedBytes();
                Transfer t = a.write(src, at, dst, at, 4096, TransferOptions.DEFAULT);
                long took = threads.getCurrentThreadAllocatedBytes() - before;
                assertEquals(4096, t.join().bytes());
                if (round >= 2000) {
                    fewest = Math.min(fewest, took);
                }
            }
            assertTrue(
                    fewest <= MOST_BYTES,
                    "a 4 KiB write allocated " + fewest + " bytes on the calling thread at best, over " + MOST_BYTES);
        }
    }
}
