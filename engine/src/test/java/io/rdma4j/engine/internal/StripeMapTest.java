package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StripeMapTest {
    private static final long U = 4096;

    @Test
    void equalNamespacesTakeUnitsInTurn() {
        StripeMap m = new StripeMap(U, new long[] {4 * U, 4 * U, 4 * U});
        assertEquals(12 * U, m.capacity());
        for (long u = 0; u < 12; u++) {
            assertEquals((int) (u % 3), m.member(u * U + 7), "unit " + u);
            assertEquals(u / 3 * U + 7, m.memberOffset(u * U + 7), "unit " + u);
        }
    }

    @Test
    void unevenNamespacesAreStripedInZonesAndEveryUsableUnitIsUsedOnce() {
        // 8, 2 and 4 units: zone 0 stripes all three up to 2 units, zone 1 the first and third up to 4, zone 2 the
        // first alone
        StripeMap m = new StripeMap(U, new long[] {8 * U, 2 * U + 100, 4 * U});
        assertEquals(14 * U, m.capacity(), "a tail below one unit is not used");
        int[] members = {0, 1, 2, 0, 1, 2, 0, 2, 0, 2, 0, 0, 0, 0};
        long[] units = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7};
        Set<String> seen = new HashSet<>();
        for (int u = 0; u < 14; u++) {
            assertEquals(members[u], m.member(u * U), "volume unit " + u);
            assertEquals(units[u] * U, m.memberOffset(u * U), "volume unit " + u);
            assertTrue(
                    seen.add(m.member(u * U) + ":" + m.memberOffset(u * U)),
                    "unit " + u + " maps onto another unit's place");
        }
        assertThrows(IndexOutOfBoundsException.class, () -> m.member(14 * U));
        assertThrows(IndexOutOfBoundsException.class, () -> m.member(-1));
    }

    @Test
    void aRangeAtAnOddOffsetSplitsAtUnitBoundariesAcrossNamespaces() {
        StripeMap m = new StripeMap(U, new long[] {8 * U, 8 * U});
        long offset = U - 512; // the last block of unit 0 (namespace 0), then unit 1 (namespace 1), then part of unit 2
        long length = 512 + U + 1024;
        StripeMap.Pieces p = m.split(offset, length, U);
        assertEquals(2, p.count(0));
        assertEquals(1, p.count(1));
        assertEquals(0, p.rangeOffset[0][0]);
        assertEquals(U - 512, p.memberOffset[0][0]);
        assertEquals(512, p.length[0][0]);
        assertEquals(512, p.rangeOffset[1][0]);
        assertEquals(0, p.memberOffset[1][0]);
        assertEquals(U, p.length[1][0]);
        assertEquals(512 + U, p.rangeOffset[0][1]);
        assertEquals(U, p.memberOffset[0][1], "unit 2 is namespace 0's second unit");
        assertEquals(1024, p.length[0][1]);
        assertEquals(length, p.bytes(0) + p.bytes(1));
    }

    @Test
    void oneNamespaceMergesAdjacentUnitsUpToTheLargestPiece() {
        StripeMap m = new StripeMap(U, new long[] {64 * U});
        StripeMap.Pieces p = m.split(512, 10 * U, 4 * U);
        assertEquals(3, p.count(0));
        assertEquals(4 * U - 512, p.length[0][0], "the first piece ends at a unit boundary");
        assertEquals(4 * U, p.length[0][1]);
        assertEquals(2 * U + 512, p.length[0][2]);
        assertEquals(8 * U, p.memberOffset[0][2]);
    }

    @Test
    void piecesCoverTheRangeExactlyWhateverTheOffset() {
        StripeMap m = new StripeMap(U, new long[] {5 * U, 3 * U, 9 * U});
        for (long off = 0; off < m.capacity(); off += 1536) {
            long len = Math.min(m.capacity() - off, 7 * U + 512);
            StripeMap.Pieces p = m.split(off, len, U);
            long sum = 0;
            for (int k = 0; k < 3; k++) {
                for (int i = 0; i < p.count(k); i++) {
                    long r = p.rangeOffset[k][i];
                    assertEquals(k, m.member(off + r));
                    assertEquals(m.memberOffset(off + r), p.memberOffset[k][i]);
                    assertEquals(m.member(off + r + p.length[k][i] - 1), k, "a piece stays on its namespace");
                    sum += p.length[k][i];
                }
            }
            assertEquals(len, sum, "offset " + off);
        }
    }
}
