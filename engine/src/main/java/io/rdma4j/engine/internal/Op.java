package io.rdma4j.engine.internal;

/** Kinds of operations on the data path, stored in lane slot tables. */
final class Op {
    static final byte WRITE = 1;
    static final byte READ = 2;
    static final byte NOTIFY = 3;
    static final byte CREDIT_READ = 4;

    private Op() {
    }
}
