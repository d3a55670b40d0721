package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Every field of a tag comes back as it went in, at the edges of its range; wrapping counts order their numbers. */
class TagsTest {
    @Test
    void controlTagsCarryEveryField() {
        for (int newest : new int[] {-1, 0, 1}) {
            long t = Tags.control(Tags.DONE, 255, 0xfffff, 3, Tags.MAX_VERSION, newest);
            assertEquals(Tags.DONE, Tags.kind(t));
            assertEquals(255, Tags.controlEpoch(t));
            assertEquals(0xfffff, Tags.controlSeq(t));
            assertEquals(3, Tags.controlMask(t));
            assertEquals(Tags.MAX_VERSION, Tags.controlVersion(t));
            assertEquals(newest, Tags.controlNewest(t));
        }
        long t = Tags.control(Tags.JOIN, 7, 1, 0, 0, -1);
        assertEquals(Tags.JOIN, Tags.kind(t));
        assertEquals(-1, Tags.controlNewest(t));
        assertEquals(0, Tags.controlVersion(t));
    }

    @Test
    void dataTagsCarryEveryField() {
        long t = Tags.data(Tags.DROP, 31, 255, 255, Tags.MAX_VERSION, 0xffff);
        assertEquals(Tags.DROP, Tags.kind(t));
        assertEquals(31, Tags.rank(t));
        assertEquals(255, Tags.epoch(t));
        assertEquals(255, Tags.plan(t));
        assertEquals(Tags.MAX_VERSION, Tags.version(t));
        assertEquals(0xffff, Tags.piece(t));
    }

    @Test
    void wrappingCountsOrderTheirNumbersOnEitherWidth() {
        for (int bits : new int[] {16, 20}) {
            int top = (1 << bits) - 1;
            int half = 1 << (bits - 1);
            String w = bits + " bits";
            assertTrue(Tags.before(top, 0, bits), w + ": just before the count wrapped");
            assertTrue(Tags.before(3, 4, bits), w);
            assertTrue(Tags.before(0, half - 1, bits), w + ": less than half the count ahead");
            assertFalse(Tags.before(0, half, bits), w + ": half the count apart is neither");
            assertFalse(Tags.before(half, 0, bits), w + ": half the count apart is neither");
            assertFalse(Tags.before(4, 4, bits), w);
            assertFalse(Tags.before(5, 4, bits), w);
            assertFalse(Tags.before(0, top, bits), w);
        }
    }
}
