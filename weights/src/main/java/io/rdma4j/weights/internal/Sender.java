package io.rdma4j.weights.internal;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferRequest;
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
            List<TransferRequest> first = new ArrayList<>(g.count() - 1);
            for (int i = 0; i < g.count() - 1; i++) {
                first.add(new TransferRequest(
                        src, g.src() + i * g.srcStride(), dst, g.dst() + i * g.dstStride(), g.length(), plain));
            }
            return engine.writeAll(first)
                    .future()
                    .thenCompose(x -> engine.write(src, lastSrc, dst, lastDst, g.length(), options)
                            .future());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
