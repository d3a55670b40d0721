package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.spi.FaultInjectingBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Write batches over two tcp engines of four lanes: a KV-cache-shaped move of 1,000 scattered blocks lands byte for
 * byte and nowhere else, adjacent descriptors merge, failed chunks are retried into the right descriptor, a batch in
 * flight cannot be changed, and bad batches are refused before anything is posted.
 */
class EngineWriteBatchTest {
    static final long MIB = 1 << 20;
    static final int BLOCK = 4096;
    static final int BLOCKS = 2048; // 8 MiB of 4 KiB blocks on each side
    static Arena arena;
    static FaultInjectingBackend[] faults = new FaultInjectingBackend[1];
    static final CountingBackend[] counts = new CountingBackend[1];
    static TransferEngine a;
    static TransferEngine b;
    static MemorySegment src;
    static MemorySegment dstMem;
    static LocalBuffer s;
    static RemoteBuffer dst;

    @BeforeAll
    static void start() {
        arena = Arena.ofShared();
        a = TestEngines.tcp("batch-a", 4)
                .laneCooldown(Duration.ofMillis(5), Duration.ofMillis(50))
                .backendWrapper(x -> faults[0] = new FaultInjectingBackend(counts[0] = new CountingBackend(x)))
                .build();
        b = TestEngines.tcp("batch-b", 4).build();
        dstMem = TestEngines.allocate(arena, BLOCKS * (long) BLOCK);
        b.publish("kv", b.register(dstMem), Access.anyPeer());
        src = TestEngines.allocate(arena, BLOCKS * (long) BLOCK);
        s = a.register(src);
        dst = a.peer(b.name()).buffer("kv");
    }

    @AfterAll
    static void stop() {
        a.close();
        b.close();
        arena.close();
    }

    /** 1,000 distinct source blocks to 1,000 distinct target blocks, shuffled so that few are adjacent. */
    private static long[][] scattered(long seed) {
        Random r = new Random(seed);
        List<Integer> from = new ArrayList<>();
        List<Integer> to = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            from.add(i);
            to.add(i);
        }
        Collections.shuffle(from, r);
        Collections.shuffle(to, r);
        long[][] d = new long[3][1000];
        for (int i = 0; i < 1000; i++) {
            d[0][i] = from.get(i) * (long) BLOCK;
            d[1][i] = to.get(i) * (long) BLOCK;
            d[2][i] = BLOCK;
        }
        return d;
    }

    /** Every block lands where its descriptor says, and every target block no descriptor names keeps its bytes. */
    private static void assertLanded(long[][] d, MemorySegment before) {
        boolean[] written = new boolean[BLOCKS];
        for (int i = 0; i < d[0].length; i++) {
            assertEquals(-1, TestEngines.mismatch(src, d[0][i], dstMem, d[1][i], d[2][i]), "descriptor " + i);
            for (long k = d[1][i] / BLOCK; k * BLOCK < d[1][i] + d[2][i]; k++) {
                written[(int) k] = true;
            }
        }
        for (int k = 0; k < BLOCKS; k++) {
            if (!written[k]) {
                assertEquals(
                        -1,
                        TestEngines.mismatch(before, k * (long) BLOCK, dstMem, k * (long) BLOCK, BLOCK),
                        "block " + k + " is named by no descriptor and must be untouched");
            }
        }
    }

    private static MemorySegment resetTarget(long seed) {
        TestEngines.fill(dstMem, seed);
        MemorySegment copy = arena.allocate(dstMem.byteSize());
        copy.copyFrom(dstMem);
        return copy;
    }

    @Test
    void aThousandScatteredBlocksLandAsOneTransferOnEveryLane() throws Exception {
        TestEngines.fill(src, 31);
        MemorySegment before = resetTarget(32);
        long[][] d = scattered(33);
        WriteBatch batch = a.newWriteBatch(s, dst, 1000).add(d[0], d[1], d[2], 1000);
        assertEquals(1000, batch.added());
        assertEquals(1000L * BLOCK, batch.bytes());
        counts[0].reset();
        TransferResult r = a.write(batch, TransferOptions.tag(3300)).join();
        assertNotNull(b.awaitTag(3300, Duration.ofSeconds(10)), "the tag follows the last block");
        assertEquals(1000L * BLOCK, r.bytes());
        assertEquals(4, r.lanesUsed().size(), "striped over every lane: " + r);
        // tcp takes several pieces a write: the scattered blocks went out gathered, each block in exactly one write
        int limit = counts[0].writeVectorLimit(0);
        assertTrue(limit > 1, "tcp's vector limit " + limit);
        assertEquals(1000, counts[0].single.get() + counts[0].pieces.get(), counts[0].toString());
        assertTrue(counts[0].vectors.get() >= (1000 - 8 * limit) / limit, counts[0].toString());
        assertFalse(batch.inFlight());
        assertLanded(d, before);

        // the same batch again, refilled: reuse allocates no new descriptor arrays
        TestEngines.fill(src, 34);
        long[][] e = scattered(35);
        batch.clear().add(e[0], e[1], e[2], 1000);
        MemorySegment again = resetTarget(36);
        a.write(batch, TransferOptions.tag(3301)).join();
        assertNotNull(b.awaitTag(3301, Duration.ofSeconds(10)));
        assertLanded(e, again);
    }

    @Test
    void adjacentDescriptorsMergeAsTheyAreAdded() throws Exception {
        TestEngines.fill(src, 41);
        MemorySegment before = resetTarget(42);
        WriteBatch batch = a.newWriteBatch(s, dst, 4)
                .add(0, 8 * BLOCK, BLOCK)
                .add(BLOCK, 9 * BLOCK, BLOCK) // continues both ranges: merged
                .add(2 * BLOCK, 10 * BLOCK, 100) // still continuing: merged
                .add(5 * BLOCK, 3 * BLOCK, BLOCK) // a gap: a new descriptor
                .add(6 * BLOCK, 20 * BLOCK, 0); // nothing
        assertEquals(5, batch.added());
        assertEquals(2, batch.descriptors());
        assertEquals(2L * BLOCK + 100, batch.length(0));
        assertEquals(8L * BLOCK, batch.targetOffset(0));
        assertEquals(5L * BLOCK, batch.sourceOffset(1));
        a.write(batch, TransferOptions.tag(4100)).join(); // a tag: the bytes are placed at the target once it lands
        assertNotNull(b.awaitTag(4100, Duration.ofSeconds(10)));
        assertLanded(new long[][] {{0, 5L * BLOCK}, {8L * BLOCK, 3L * BLOCK}, {2L * BLOCK + 100, BLOCK}}, before);
    }

    @Test
    void failedChunksAreRetriedIntoTheirOwnDescriptors() throws Exception {
        TestEngines.fill(src, 51);
        MemorySegment before = resetTarget(52);
        long[][] d = scattered(53);
        WriteBatch batch = a.newWriteBatch(s, dst, 1000).add(d[0], d[1], d[2], 1000);
        faults[0].failCompletions(1, 3).failPosts(2, 2);
        TransferResult r = a.write(batch, TransferOptions.tag(5300)).join();
        assertTrue(r.retries() >= 3, "expected retries, got " + r);
        assertNotNull(b.awaitTag(5300, Duration.ofSeconds(10)));
        assertLanded(d, before);
    }

    @Test
    void aBatchInFlightCannotBeChangedOrWrittenAgain() throws Exception {
        WriteBatch batch = a.newWriteBatch(s, dst, 8).add(0, 0, BLOCK).add(4 * BLOCK, 2 * BLOCK, BLOCK);
        for (int lane = 0; lane < 4; lane++) {
            faults[0].hold(lane);
        }
        Transfer t;
        try {
            t = a.write(batch, TransferOptions.DEFAULT);
            assertTrue(batch.inFlight());
            assertThrows(IllegalStateException.class, () -> batch.add(8 * BLOCK, 8 * BLOCK, BLOCK));
            assertThrows(IllegalStateException.class, batch::clear);
            IllegalStateException twice =
                    assertThrows(IllegalStateException.class, () -> a.write(batch, TransferOptions.DEFAULT));
            assertTrue(twice.getMessage().contains("already being written"), twice.getMessage());
        } finally {
            for (int lane = 0; lane < 4; lane++) {
                faults[0].release(lane);
            }
        }
        t.join();
        assertFalse(batch.inFlight());
        batch.clear().add(8 * BLOCK, 8 * BLOCK, BLOCK);
        a.write(batch, TransferOptions.DEFAULT).join();
    }

    @Test
    void badBatchesAreRefusedBeforeAnythingIsPosted() {
        long size = BLOCKS * (long) BLOCK;
        WriteBatch batch = a.newWriteBatch(s, dst, 2).add(0, 0, BLOCK);
        InvalidArgumentException outside =
                assertThrows(InvalidArgumentException.class, () -> batch.add(size - 10, 0, BLOCK));
        assertTrue(outside.getMessage().contains("descriptor 1 of the batch, source"), outside.getMessage());
        InvalidArgumentException target = assertThrows(InvalidArgumentException.class, () -> batch.add(0, size, 1));
        assertTrue(target.getMessage().contains("descriptor 1 of the batch, target"), target.getMessage());
        assertThrows(InvalidArgumentException.class, () -> batch.add(0, 0, -1));
        assertEquals(1, batch.added(), "refused descriptors are not added");
        batch.add(8 * BLOCK, 8 * BLOCK, BLOCK);
        IllegalStateException full = assertThrows(IllegalStateException.class, () -> batch.add(99 * BLOCK, 0, 1));
        assertTrue(full.getMessage().contains("the batch is full"), full.getMessage());

        InvalidArgumentException crc = assertThrows(
                InvalidArgumentException.class,
                () -> a.write(batch, TransferOptions.tag(77).withCrc32c()));
        assertTrue(crc.getMessage().contains("cannot carry a CRC32C"), crc.getMessage());
        assertFalse(batch.inFlight(), "a refused write leaves the batch free");
        InvalidArgumentException empty = assertThrows(
                InvalidArgumentException.class, () -> a.write(a.newWriteBatch(s, dst, 1), TransferOptions.DEFAULT));
        assertTrue(empty.getMessage().contains("empty"), empty.getMessage());
        InvalidArgumentException foreign =
                assertThrows(InvalidArgumentException.class, () -> b.write(batch, TransferOptions.DEFAULT));
        assertTrue(foreign.getMessage().contains("not made by this engine"), foreign.getMessage());
        assertThrows(InvalidArgumentException.class, () -> a.newWriteBatch(s, dst, 0));
    }

    /**
     * Filling a batch allocates nothing per descriptor: measured on this thread with the JVM's allocation counter,
     * after a warm-up (a message built for every descriptor, as before, costs over 400 KB for 1,000).
     */
    @Test
    void fillingABatchAllocatesNothingPerDescriptor() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[][] d = scattered(71);
        WriteBatch batch = a.newWriteBatch(s, dst, 1000);
        long fewest = Long.MAX_VALUE;
        for (int round = 0; round < 200; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            batch.clear().add(d[0], d[1], d[2], 1000);
            fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
        }
        assertEquals(1000, batch.added());
        assertTrue(fewest < 1000, "clear and 1,000 adds allocated " + fewest + " bytes at best");
    }
}
