package io.rdma4j.engine;

import java.util.concurrent.CompletableFuture;

/**
 * A running transfer. The future completes normally only when every chunk completed successfully (and, for a write with
 * a notification, when the tag has been delivered into the target's memory; for a write with a CRC32C, when the target
 * verified it). Otherwise it completes exceptionally with a {@link TransferException}: {@link TransferTimeoutException}
 * when the deadline passed, {@link PeerLostException} when the peer went away, {@link LaneFailureException} when a
 * chunk failed on every lane tried, {@link ChecksumMismatchException} when the target's check failed, and a plain
 * {@code TransferException} otherwise (the engine or volume closed with it in flight, a device copy failed); the native
 * error, if any, is its cause. Only {@link #cancel()} completes it with the JDK's
 * {@link java.util.concurrent.CancellationException}.
 *
 * <p>A chunk completes when its provider says so. Over providers that complete at transmit (libfabric's tcp, and shm
 * for writes up to 4 KiB, which travel through its shared buffers) the bytes may still be on their way then; the
 * notification, sent behind them on every lane that carried some, is what tells the target they landed.
 */
public interface Transfer {
    /**
     * {@return the future of the result; it fails as this interface's description says (through
     * {@link CompletableFuture#join()} wrapped in a {@link java.util.concurrent.CompletionException})}
     */
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
     * @throws TransferException how the transfer failed, one of the subclasses this interface's description lists
     * @throws java.util.concurrent.CancellationException when the transfer was cancelled
     */
    TransferResult join();
}
