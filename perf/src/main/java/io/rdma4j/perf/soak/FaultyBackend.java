package io.rdma4j.perf.soak;

import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.ForwardingEngineBackend;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak's lane-fault injector, installed through {@code TransferEngine.Builder.backendWrapper}: a real backend whose
 * chosen lanes fail their next posts, or report their next successful local completions as errors (the operation may
 * well have landed, as after a lost acknowledgement). Everything else goes to the real backend.
 */
final class FaultyBackend extends ForwardingEngineBackend {
    /** The error code injected completions carry (EIO). */
    static final int INJECTED = 5;

    private final AtomicIntegerArray failPosts;
    private final AtomicIntegerArray failCompletions;
    private final AtomicLong injected = new AtomicLong();

    FaultyBackend(EngineBackend inner) {
        super(inner);
        failPosts = new AtomicIntegerArray(inner.lanes().size());
        failCompletions = new AtomicIntegerArray(inner.lanes().size());
    }

    /** The next {@code n} posts on {@code lane} fail. */
    void failPosts(int lane, int n) {
        failPosts.set(lane, n);
    }

    /** The next {@code n} successful local completions on {@code lane} report an error. */
    void failCompletions(int lane, int n) {
        failCompletions.set(lane, n);
    }

    /** {@return posts and completions failed so far} */
    long injected() {
        return injected.get();
    }

    private boolean take(AtomicIntegerArray counts, int lane) {
        while (true) {
            int n = counts.get(lane);
            if (n <= 0) {
                return false;
            }
            if (counts.compareAndSet(lane, n, n - 1)) {
                injected.incrementAndGet();
                return true;
            }
        }
    }

    @Override
    public String description() {
        return inner.description() + " (soak fault injection)";
    }

    @Override
    public int postWrite(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        return take(failPosts, lane)
                ? FAILED
                : inner.postWrite(
                        lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }

    @Override
    public int postWriteImmediate(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int immediate,
            long context) {
        return take(failPosts, lane)
                ? FAILED
                : inner.postWriteImmediate(
                        lane,
                        connection,
                        localHandle,
                        localAddress,
                        length,
                        remoteAddress,
                        remoteKey,
                        immediate,
                        context);
    }

    @Override
    public int postRead(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        return take(failPosts, lane)
                ? FAILED
                : inner.postRead(
                        lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
    }

    @Override
    public int poll(int lane, Completions out) {
        int n = inner.poll(lane, out);
        for (int i = 0; i < n; i++) {
            // rewritten in place: the batch keeps its size, so nothing is dropped or carried over
            if (out.kind[i] == Completions.LOCAL && out.status[i] == 0 && take(failCompletions, lane)) {
                out.status[i] = INJECTED;
                out.errorText[i] = "soak: injected completion error on lane " + lane;
            }
        }
        return n;
    }
}
