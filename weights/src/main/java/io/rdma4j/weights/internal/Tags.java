package io.rdma4j.weights.internal;

/**
 * The 64-bit notification tags of weight sync. Every tag names its kind and the publisher's epoch (a random number each
 * publisher process draws at start), so a restarted publisher's old writes are told apart from its new ones.
 *
 * <pre>
 * DATA, PLAN, PING, DROP (publisher to subscriber): kind:4 | rank:5 | epoch:8 | plan:8 | version:23 | piece:16
 *   (a DROP's piece field numbers the drop)
 * JOIN, DONE, FREE (subscriber to publisher): kind:4 | epoch:8 | seq:20 | mask:2 | version:23 | newest:2 | unused:5
 *   (newest: 1 + the buffer holding the subscriber's newest complete version when it has two, else 0)
 * </pre>
 */
public final class Tags {
    public static final int DATA = 1;
    public static final int PLAN = 2;
    public static final int JOIN = 3;
    public static final int DONE = 4;
    public static final int FREE = 5;
    public static final int PING = 6;
    /** The publisher dropped the subscriber after it failed a version: join again to get the next one. */
    public static final int DROP = 7;

    /** Versions travel in 23 bits. */
    public static final long MAX_VERSION = (1L << 23) - 1;

    public static final int MAX_RANKS = 32;
    public static final int MAX_PIECES = 1 << 16;

    private Tags() {}

    public static long data(int kind, int rank, int epoch, int plan, long version, int piece) {
        return ((long) kind << 60)
                | ((long) (rank & 0x1f) << 55)
                | ((long) (epoch & 0xff) << 47)
                | ((long) (plan & 0xff) << 39)
                | ((version & MAX_VERSION) << 16)
                | (piece & 0xffff);
    }

    public static long control(int kind, int epoch, int seq, int mask, long version, int newest) {
        return ((long) kind << 60)
                | ((long) (epoch & 0xff) << 52)
                | ((long) (seq & 0xfffff) << 32)
                | ((long) (mask & 3) << 30)
                | ((version & MAX_VERSION) << 7)
                | ((long) ((newest + 1) & 3) << 5);
    }

    public static int kind(long tag) {
        return (int) (tag >>> 60);
    }

    public static int rank(long tag) {
        return (int) (tag >>> 55) & 0x1f;
    }

    public static int epoch(long tag) {
        return (int) (tag >>> 47) & 0xff;
    }

    public static int plan(long tag) {
        return (int) (tag >>> 39) & 0xff;
    }

    public static long version(long tag) {
        return (tag >>> 16) & MAX_VERSION;
    }

    public static int piece(long tag) {
        return (int) tag & 0xffff;
    }

    /**
     * {@return whether drop notice number {@code a} was drawn before number {@code b}} The numbers count on 16 bits and
     * wrap; of two numbers less than half the count apart, the one behind came first.
     */
    public static boolean noticeBefore(int a, int b) {
        return before(a, b, 16);
    }

    /**
     * {@return whether {@code a} came before {@code b} on a count of {@code bits} bits that wraps} Of two numbers less
     * than half the count apart, the one behind came first; equal numbers, or numbers half the count apart, did not.
     */
    public static boolean before(int a, int b, int bits) {
        int mask = (1 << bits) - 1;
        int d = (b - a) & mask;
        return d != 0 && d < (1 << (bits - 1));
    }

    public static int controlEpoch(long tag) {
        return (int) (tag >>> 52) & 0xff;
    }

    public static int controlSeq(long tag) {
        return (int) (tag >>> 32) & 0xfffff;
    }

    public static int controlMask(long tag) {
        return (int) (tag >>> 30) & 3;
    }

    public static long controlVersion(long tag) {
        return (tag >>> 7) & MAX_VERSION;
    }

    /** {@return the buffer holding the subscriber's newest complete version (when it has two), or -1} */
    public static int controlNewest(long tag) {
        return (int) ((tag >>> 5) & 3) - 1;
    }
}
