package io.rdma4j.engine;

import java.util.Objects;

/**
 * One write of a batch ({@link TransferEngine#writeAll}).
 *
 * @param source local registered buffer
 * @param sourceOffset first byte of {@code source} to send
 * @param target remote buffer
 * @param targetOffset where in {@code target} the bytes land
 * @param length bytes to move
 * @param options deadline, notification, checksum
 */
public record TransferRequest(
        LocalBuffer source,
        long sourceOffset,
        RemoteBuffer target,
        long targetOffset,
        long length,
        TransferOptions options) {
    /** Checks the buffers are given; {@code null} options mean {@link TransferOptions#DEFAULT}. */
    public TransferRequest {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(target, "target");
        options = options == null ? TransferOptions.DEFAULT : options;
    }

    /**
     * {@return a request for the whole source into the start of the target}
     *
     * @param source the local registered buffer
     * @param target the remote buffer
     * @param options deadline, notification, checksum
     */
    public static TransferRequest of(LocalBuffer source, RemoteBuffer target, TransferOptions options) {
        return new TransferRequest(source, 0, target, 0, source.length(), options);
    }
}
