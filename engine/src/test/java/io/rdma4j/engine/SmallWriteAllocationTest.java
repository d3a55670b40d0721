package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * What a single small write allocates on the calling thread, between two tcp engines of four lanes: its transfer and
 * its future, nothing beside them. The transfer is its own stripe (one lane carries a small write whole), it links
 * itself into the engine's in-flight lists and into its progress thread's inbox, and the preparer makes it directly:
 * before, a write also allocated its checked plan, a stripe, a queue node and two in-flight set nodes (432 B in all
 * here, against 296 B now). The lanes are ranked once per peer and reused, not ranked again per write: ranking
 * allocated a candidate per lane, two lists and a lane assignment, about 600 more bytes a write.
 */
class SmallWriteAllocationTest {
    /** The transfer (about 280 B with its stripe's fields) and its future (16 B), with a little room. */
    static final long MOST_BYTES = 320;

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
