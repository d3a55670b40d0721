package io.rdma4j.weights.internal;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/** Reads a publisher rank's manifest (its tensors, rank and epoch) with a one-sided read of the buffer it published. */
public final class ManifestReader {
    private ManifestReader() {}

    /**
     * Reads the manifest {@code publisher} published as {@code bufferName}, retrying until {@code timeout} while the
     * publisher is not up yet.
     *
     * @throws InvalidArgumentException when the manifest is malformed
     * @throws Rdma4jException when none could be read in time
     */
    public static Wire.Manifest read(
            TransferEngine engine, Arena arena, String publisher, String bufferName, Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (true) {
            try {
                RemoteBuffer m = engine.peer(publisher).buffer(bufferName);
                long len = Math.min(m.length(), 64L << 20);
                MemorySegment seg = arena.allocate(len, 4096);
                try (LocalBuffer lb = engine.register(seg)) {
                    engine.read(lb, 0, m, 0, len, TransferOptions.DEFAULT.withDeadline(Duration.ofSeconds(10)))
                            .join();
                }
                return Wire.manifest(seg, publisher);
            } catch (InvalidArgumentException e) {
                throw e;
            } catch (RuntimeException e) {
                last = e;
            }
            if (System.nanoTime() > end) {
                throw new Rdma4jException(
                        "no weights manifest from " + publisher + " within " + timeout.toMillis()
                                + " ms: start the publisher (./rdma4j weights publish) or check the name",
                        last);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Rdma4jException("interrupted while waiting for " + publisher, e);
            }
        }
    }
}
