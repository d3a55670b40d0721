package io.rdma4j.nvmeof;

import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Blocking calls on a queue for the control path (bring-up, admin commands, shutdown): send one command, wait for it
 * within a timeout, and turn what comes back (an error status, a timeout, a failed connection) into the exception a
 * caller of {@link Controller} sees. Stateless; the I/O path never blocks and does not use it.
 */
final class Calls {
    private Calls() {}

    /** @return {@code b} as a command's data, moving to the controller or from it */
    static FabricQueue.Data heap(byte[] b, boolean toController) {
        return new FabricQueue.Data(MemorySegment.ofArray(b), 0, b.length, toController);
    }

    /**
     * Sends one command and waits for it, turning an error status into an {@link NvmeStatusException}.
     *
     * @param fabrics the command is a Fabrics command (its status codes are named as such)
     * @param target names the controller in a timeout's message
     */
    static Cqe call(
            FabricQueue q,
            byte[] sqe,
            FabricQueue.Data data,
            String what,
            boolean fabrics,
            Duration timeout,
            Target target) {
        Cqe cqe = await(q.submit(sqe, data, what), timeout, target + ": " + what);
        if (!cqe.ok()) {
            throw new NvmeStatusException(what, fabrics, cqe.sct(), cqe.sc(), cqe.dnr(), cqe.dw0());
        }
        return cqe;
    }

    static <T> T await(CompletableFuture<T> f, Duration timeout, String what) {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new NvmeConnectionException(what + ": no completion within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof NvmeException n) {
                throw n;
            }
            throw new NvmeException(what + " failed: " + c, c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException(what + ": interrupted", e);
        }
    }

    /** @return the failure inside completion wrappers */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
