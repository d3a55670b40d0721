package io.rdma4j.perf.soak;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bytes every soak transfer carries: 64-bit words of SplitMix64 over a seed, so that any process can check a range
 * knowing only the seed (the tag of a tagged write is its seed) and its length. Lengths are multiples of 8.
 */
final class Pattern {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    private Pattern() {}

    static long word(long seed, long index) {
        long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Fills the first {@code length} bytes of {@code s} with the pattern of {@code seed}. */
    static void fill(MemorySegment s, long seed, long length) {
        for (long i = 0; i < length; i += 8) {
            s.set(WORD, i, word(seed, i >>> 3));
        }
    }

    /** {@return how many of the first {@code length} bytes of {@code s} differ from the pattern of {@code seed}} */
    static long corruptBytes(MemorySegment s, long seed, long length) {
        long bad = 0;
        for (long i = 0; i < length; i += 8) {
            long diff = s.get(WORD, i) ^ word(seed, i >>> 3);
            for (; diff != 0; diff >>>= 8) {
                if ((diff & 0xff) != 0) {
                    bad++;
                }
            }
        }
        return bad;
    }
}
