package io.rdma4j.weights.internal;

/**
 * What a publisher's control thread learns of one subscriber from its JOIN, DONE and FREE notifications: its newest
 * confirmed version, which of its buffers the publisher may write, and which holds its newest complete version.
 * Notifications may arrive out of order: the mask and newest buffer of a later one (by sequence number) win.
 */
public final class MemberSignal {
    /** The newest version it confirmed, or -1. */
    public volatile long done = -1;

    /** Bit s set: its buffer s is the publisher's to write. */
    public volatile int mask;

    /** The buffer holding its newest complete version when it has two (never free until a newer one lands), or -1. */
    public volatile int newest = -1;

    /** The number the subscriber process drew at random and sends with each join: a new one is a new process. */
    public final int incarnation;

    private int seq = -1;

    /** @param incarnation the subscriber process's number, from its join */
    public MemberSignal(int incarnation) {
        this.incarnation = incarnation;
    }

    /**
     * Whether {@code seq} is later than {@code last} on the 20-bit wrapping count (-1: none yet): less than half the
     * count ahead of it.
     */
    private static boolean after(int seq, int last) {
        return last < 0 || Tags.before(last, seq, 20);
    }

    /**
     * Marks buffer {@code slot} as in use; under the lock, so that a concurrent update is not lost.
     *
     * @param slot the buffer
     */
    public synchronized void take(int slot) {
        mask &= ~(1 << slot);
    }

    /**
     * Takes what one notification says.
     *
     * @param seq its sequence number (20 bits, wrapping)
     * @param mask the buffers free to the publisher
     * @param newest the buffer holding the newest complete version, or -1
     * @param done the version it confirms, or -1
     */
    public synchronized void update(int seq, int mask, int newest, long done) {
        if (after(seq, this.seq)) {
            this.seq = seq;
            this.mask = mask;
            this.newest = newest;
        }
        if (done > this.done) {
            this.done = done;
        }
    }
}
