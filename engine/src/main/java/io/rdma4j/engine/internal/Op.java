package io.rdma4j.engine.internal;

/** Kinds of operations on the data path, stored in lane slot tables. */
final class Op {
    static final byte WRITE = 1;
    static final byte READ = 2;
    static final byte NOTIFY = 3;
    static final byte CREDIT_READ = 4;
    /** A read of a peer's CRC32C verdict word for one write (the slot's owner is the {@link TransferImpl}). */
    static final byte VERDICT_READ = 5;

    private Op() {}
}
