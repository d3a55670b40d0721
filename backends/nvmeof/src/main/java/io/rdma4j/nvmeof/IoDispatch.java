package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import io.rdma4j.nvmeof.internal.Sqe;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Supplier;

/**
 * Where a {@link Controller}'s I/O commands go and how their futures complete: the queue each thread sends on, the
 * spill from a full queue to the next, the command's meters, and its answer as the caller's future.
 *
 * <p>Each thread is dealt a queue round robin at its first command: one thread's commands share a queue, so they go out
 * together in its sends and one queue thread completes them, as the kernel maps each CPU to one hardware queue
 * (spreading one thread's commands over every queue wakes every queue's thread for a share of them, on the same cores).
 * A queue's own thread (a callback sending the next command) keeps to its queue, which then sends the command without
 * waking anyone.
 */
final class IoDispatch {
    private final QueueMetrics metrics;
    /** The controller's current session, for a queue's thread to find its own queue in; null before the first. */
    private final Supplier<Session> sessions;

    private final AtomicInteger nextQueue = new AtomicInteger();
    private final ThreadLocal<Integer> callersQueue = ThreadLocal.withInitial(this::dealQueue);
    /** Commands sent and not yet completed, by I/O queue: a thread whose queue is full spills to one with room. */
    private final AtomicIntegerArray outstanding;

    IoDispatch(QueueMetrics metrics, int ioQueues, Supplier<Session> sessions) {
        this.metrics = metrics;
        this.sessions = sessions;
        this.outstanding = new AtomicIntegerArray(ioQueues);
    }

    /** @return the calling thread's queue, modulo the number of queues */
    int callersQueue() {
        return callersQueue.get();
    }

    private int dealQueue() {
        Session s = sessions.get();
        Thread me = Thread.currentThread();
        if (s != null) {
            for (int i = 0; i < s.io().size(); i++) {
                if (s.io().get(i).completesOn(me)) {
                    return i;
                }
            }
        }
        return nextQueue.getAndIncrement();
    }

    /**
     * Sends a command on {@code queue} of session {@code s}, or the next with a free slot when it is full.
     *
     * @param what names the command; null: named from its bytes ({@link Sqe#describe}) only if it fails
     * @param queue the I/O queue, modulo their number
     * @return completes when the command does; fails with its status ({@link NvmeStatusException}) or the connection's
     *     failure, never wrapped in a {@code CompletionException}
     */
    CompletableFuture<Void> send(Session s, byte[] sqe, FabricQueue.Data data, String what, int queue) {
        if (s.io().isEmpty()) {
            throw new IllegalStateException(
                    (what != null ? what : Sqe.describe(sqe)) + ": a discovery controller has no I/O queues");
        }
        int qi = withRoom(Math.floorMod(queue, s.io().size()), s);
        FabricQueue q = s.io().get(qi);
        NvmeException down = q.failure();
        if (down != null) {
            return CompletableFuture.failedFuture(new NvmeConnectionException(
                    (what != null ? what : Sqe.describe(sqe)) + ": the connection is down (" + down.getMessage()
                            + "); call reconnect()",
                    down));
        }
        // Completes with the failure itself (never wrapped in a CompletionException), like a split transfer's all().
        CompletableFuture<Void> result = new CompletableFuture<>();
        CompletableFuture<Cqe> sent;
        outstanding.incrementAndGet(qi);
        try {
            sent = q.submit(sqe, data, what);
        } catch (RuntimeException e) {
            outstanding.decrementAndGet(qi);
            throw e;
        }
        if (metrics == QueueMetrics.OFF) {
            sent.whenComplete((cqe, t) -> {
                outstanding.decrementAndGet(qi);
                answer(result, cqe, t, sqe, what);
            });
            return result;
        }
        // counted before the caller's future completes, so a caller that joined it sees the command in the meters
        long start = metrics.submitted(qi);
        sent.whenComplete((cqe, t) -> {
            outstanding.decrementAndGet(qi);
            metrics.completed(qi, data.length(), start, t == null && cqe.ok());
            answer(result, cqe, t, sqe, what);
        });
        return result;
    }

    /**
     * @return queue {@code qi} if it has a free slot, else the next one that has; {@code qi} when all are full (the
     *     command then waits there for a slot)
     */
    private int withRoom(int qi, Session s) {
        int n = s.io().size();
        if (outstanding.get(qi) < s.depth()) {
            return qi;
        }
        for (int i = 1; i < n; i++) {
            int j = (qi + i) % n;
            if (outstanding.get(j) < s.depth()) {
                return j;
            }
        }
        return qi;
    }

    private static void answer(CompletableFuture<Void> result, Cqe cqe, Throwable t, byte[] sqe, String what) {
        if (t != null) {
            result.completeExceptionally(Calls.unwrap(t));
        } else if (!cqe.ok()) {
            result.completeExceptionally(new NvmeStatusException(
                    what != null ? what : Sqe.describe(sqe), false, cqe.sct(), cqe.sc(), cqe.dnr(), cqe.dw0()));
        } else {
            result.complete(null);
        }
    }

    /** Completes when every part has; fails with the first part's failure, unwrapped. */
    static CompletableFuture<Void> all(List<CompletableFuture<Void>> parts) {
        if (parts.size() == 1) {
            return parts.get(0).exceptionallyCompose(t -> CompletableFuture.failedFuture(Calls.unwrap(t)));
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        AtomicInteger left = new AtomicInteger(parts.size());
        for (CompletableFuture<Void> p : parts) {
            p.whenComplete((v, t) -> {
                if (t != null) {
                    result.completeExceptionally(Calls.unwrap(t));
                } else if (left.decrementAndGet() == 0) {
                    result.complete(null);
                }
            });
        }
        return result;
    }
}
