package io.rdma4j;

/**
 * Root of every exception rdma4j throws, and of every failure a returned future completes with (a caller that cancels
 * gets the JDK's {@link java.util.concurrent.CancellationException}). Unchecked: control-path failures are not
 * recoverable by the caller's type system. A message says what happened and, where that is known, what to do.
 *
 * <pre>
 * Rdma4jException                      (io.rdma4j)
 * +-- InvalidArgumentException         a checked argument is wrong: range, name, size, options, another engine's
 * |                                    buffer; thrown before anything is posted, fix the call
 * +-- ClosedException                  the engine, buffer, volume or native object (or the memory's arena) is closed
 * +-- BackendUnavailableException      a backend or native library cannot load here; the message says what to install
 * +-- DeviceRegistrationException      GPU memory cannot be registered with a NIC on any path
 * +-- NativeCallException              a native call failed: function, error code and text
 * |   +-- VerbsException               (rdma4j-ibverbs)
 * |   +-- FabricException              (rdma4j-libfabric), CompletionErrorException
 * |   `-- CudaException                (rdma4j-cuda)
 * +-- UnknownPeerException             (io.rdma4j.engine) no peer of that name is announced
 * +-- UnknownBufferException           (io.rdma4j.engine) the peer published no buffer of that name for us
 * +-- TransferException                (io.rdma4j.engine) a transfer failed; what a transfer's future fails with
 * |   +-- PeerLostException            the peer went away
 * |   +-- LaneFailureException         a chunk failed on every lane tried
 * |   +-- TransferTimeoutException     the deadline passed
 * |   `-- ChecksumMismatchException    the bytes that landed differ from those sent
 * +-- TopologyException                (rdma4j-topology) a topology file or sysfs tree cannot be read
 * +-- RendezvousException              (rdma4j-rendezvous) the directory or a handshake failed
 * `-- NvmeException                    (rdma4j-nvmeof) NvmeStatusException, NvmeConnectionException, ...
 * </pre>
 *
 * <p>Which kind comes when:
 *
 * <ul>
 *   <li><b>Argument errors</b> ({@link InvalidArgumentException}) and <b>state errors</b> ({@link ClosedException}) are
 *       thrown by the call itself, before anything is posted.
 *   <li><b>Native failures</b> ({@link NativeCallException} and its subclasses, {@link BackendUnavailableException},
 *       {@link DeviceRegistrationException}) are thrown by control-path calls (open, register, connect); on the data
 *       path they become the cause of a transfer's failure.
 *   <li><b>Transfer outcomes</b> ({@code TransferException} and its subclasses) complete a transfer's future
 *       exceptionally; a write or read also throws one when it can tell before posting that it cannot run (the peer is
 *       already lost, no lane reaches it).
 * </ul>
 *
 * <p>What stays a JDK exception, because the caller did it, not rdma4j: a {@code null} argument where none is allowed
 * throws {@link NullPointerException} naming the parameter; asking a device buffer for a CPU segment throws
 * {@link UnsupportedOperationException}; an interrupted wait throws {@link InterruptedException}; a cancelled
 * transfer's future completes with {@link java.util.concurrent.CancellationException}. Anything else that escapes (an
 * {@link IllegalStateException} from inside the engine, say) is a bug: please report it.
 */
public class Rdma4jException extends RuntimeException {
    /**
     * Creates the exception.
     *
     * @param message what happened, and what to do where that is known
     */
    public Rdma4jException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what happened, and what to do where that is known
     * @param cause the failure underneath
     */
    public Rdma4jException(String message, Throwable cause) {
        super(message, cause);
    }
}
