package io.rdma4j.engine;

import java.util.concurrent.CompletableFuture;

/**
 * A running transfer. The future completes normally only when every chunk completed successfully (and, for a write
 * with a notification, when the tag has been delivered into the target's memory; for a write with a CRC32C, when the
 * target verified it); exceptionally with a {@link TransferException} subclass ({@link ChecksumMismatchException} when
 * the target's check failed) or {@link java.util.concurrent.CancellationException} otherwise.
 */
public interface Transfer {
    /** {@return the future of the result} */
    CompletableFuture<TransferResult> future();

    /** {@return bytes whose chunks completed so far} */
    long bytesCompleted();

    /** {@return bytes this transfer moves} */
    long bytesTotal();

    /**
     * Stops the transfer: chunks not yet posted are dropped, the future completes with a
     * {@link java.util.concurrent.CancellationException}, and no notification is sent, unless every byte had already
     * landed and the notification was on its way (then the target still gets it: it never names missing data). Chunks
     * already on the wire finish on their own; the memory stays registered until they have. Returns false if it had
     * already finished.
     *
     * @return false if the transfer had already finished
     */
    boolean cancel();

    /**
     * Waits for the result, rethrowing the failure unwrapped.
     *
     * @return what the transfer did
     */
    TransferResult join();
}
