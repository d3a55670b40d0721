package io.rdma4j.weights.internal;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferRequest;
import io.rdma4j.engine.WriteBatch;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Writes one piece: its runs, the last one carrying the piece's tag once all the others completed. */
public final class Sender {
    private Sender() {}

    /**
     * {@return a future that completes when the whole piece landed and its tag was delivered}
     *
     * @param engine the writing engine
     * @param src where the runs' source offsets point
     * @param dst where the runs' destination offsets point
     * @param g the runs
     * @param options the tagged options of the last run (deadline, CRC32C)
     */
    public static CompletableFuture<?> send(
            TransferEngine engine, LocalBuffer src, RemoteBuffer dst, Runs.Group g, TransferOptions options) {
        try {
            long lastSrc = g.src() + (g.count() - 1) * g.srcStride();
            long lastDst = g.dst() + (g.count() - 1) * g.dstStride();
            if (g.count() == 1) {
                return engine.write(src, lastSrc, dst, lastDst, g.length(), options)
                        .future();
            }
            TransferOptions plain = TransferOptions.DEFAULT.withDeadline(options.deadline());
            return first(engine, src, dst, g, plain)
                    .thenCompose(x -> engine.write(src, lastSrc, dst, lastDst, g.length(), options)
                            .future());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Every run but the last: one {@link WriteBatch} transfer from host memory (a resharded piece is thousands of row
     * slices, and a transfer each cost microseconds apiece), a transfer per run from device memory, which batches do
     * not read.
     */
    private static CompletableFuture<?> first(
            TransferEngine engine, LocalBuffer src, RemoteBuffer dst, Runs.Group g, TransferOptions plain) {
        int n = g.count() - 1;
        if (src.device() == null) {
            WriteBatch b = engine.newWriteBatch(src, dst, n);
            for (int i = 0; i < n; i++) {
                b.add(g.src() + i * g.srcStride(), g.dst() + i * g.dstStride(), g.length());
            }
            return engine.write(b, plain).future();
        }
        List<TransferRequest> first = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            first.add(new TransferRequest(
                    src, g.src() + i * g.srcStride(), dst, g.dst() + i * g.dstStride(), g.length(), plain));
        }
        return engine.writeAll(first).future();
    }
}
