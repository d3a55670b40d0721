package io.rdma4j.engine.internal;

import java.util.concurrent.atomic.AtomicLong;

/** Errors caught off the caller's thread (progress threads, checksum checks): a count and the last one. */
final class ProgressErrors {
    private final AtomicLong count = new AtomicLong();
    private volatile Throwable last;

    void record(Throwable t) {
        count.incrementAndGet();
        last = t;
    }

    long count() {
        return count.get();
    }

    Throwable last() {
        return last;
    }
}
