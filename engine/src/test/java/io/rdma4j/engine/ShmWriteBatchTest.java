package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Write batches over two shm engines: blocks small enough go out several to a write, within shm's inject size, and
 * larger ones one to a write, and both land byte for byte and nowhere else.
 */
class ShmWriteBatchTest {
    static final int SLOTS = 2048;

    @Test
    void smallBlocksGoOutGatheredWithinTheInjectSizeAndPagesAlone() throws Exception {
        CountingBackend[] counts = new CountingBackend[1];
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.shm("shm-batch-a", 2)
                        .backendWrapper(x -> counts[0] = new CountingBackend(x))
                        .build();
                TransferEngine b = TestEngines.shm("shm-batch-b", 2).build()) {
            MemorySegment src = TestEngines.allocate(arena, SLOTS * 4096L);
            MemorySegment dst = TestEngines.allocate(arena, SLOTS * 4096L);
            b.publish("kv", b.register(dst), Access.anyPeer());
            LocalBuffer s = a.register(src);
            RemoteBuffer d = a.peer(b.name()).buffer("kv");
            long bound = counts[0].writeVectorBytes(0);
            assertTrue(counts[0].writeVectorLimit(0) > 1, "shm takes several pieces a write");
            assertTrue(bound >= 1024 && bound < 4096 * 2, "shm's bound is its inject size: " + bound);
            int tag = 600;
            for (int block : new int[] {1024, 4096}) {
                TestEngines.fill(src, block);
                TestEngines.fill(dst, -block);
                MemorySegment before = arena.allocate(dst.byteSize());
                before.copyFrom(dst);
                // 1,000 distinct source slots to 1,000 distinct target slots, each slot a page, each block its start
                int[] from = shuffled(block);
                int[] to = shuffled(block + 1);
                WriteBatch batch = a.newWriteBatch(s, d, 1000);
                for (int i = 0; i < 1000; i++) {
                    batch.add(from[i] * 4096L, to[i] * 4096L, block);
                }
                counts[0].reset();
                a.write(batch, TransferOptions.tag(++tag)).join();
                assertNotNull(b.awaitTag(tag, Duration.ofSeconds(10)), "the tag follows the last block");
                boolean[] written = new boolean[SLOTS];
                for (int i = 0; i < 1000; i++) {
                    written[to[i]] = true;
                    assertEquals(
                            -1, TestEngines.mismatch(src, from[i] * 4096L, dst, to[i] * 4096L, block), "block " + i);
                }
                for (int k = 0; k < SLOTS; k++) {
                    long keep = written[k] ? block : 0;
                    assertEquals(
                            -1,
                            TestEngines.mismatch(before, k * 4096L + keep, dst, k * 4096L + keep, 4096 - keep),
                            "target page " + k + " past its block must be untouched");
                }
                CountingBackend c = counts[0];
                assertEquals(1000, c.single.get() + c.pieces.get(), block + " B blocks: " + c);
                if (block * 2 <= bound) {
                    assertTrue(c.vectors.get() >= 1000 / (bound / block) / 2, block + " B blocks: " + c);
                    assertTrue(c.largestVector.get() <= bound, block + " B blocks: " + c);
                } else {
                    assertEquals(0, c.vectors.get(), block + " B blocks: " + c);
                }
            }
        }
    }

    private static int[] shuffled(long seed) {
        int[] slots = new int[SLOTS];
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = i;
        }
        Random r = new Random(seed);
        for (int i = SLOTS - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = slots[i];
            slots[i] = slots[j];
            slots[j] = t;
        }
        return slots;
    }
}
