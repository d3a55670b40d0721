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

    private int seq = -1;

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
        if (seq > this.seq || this.seq - seq > (1 << 19)) {
            this.seq = seq;
            this.mask = mask;
            this.newest = newest;
        }
        if (done > this.done) {
            this.done = done;
        }
    }
}
