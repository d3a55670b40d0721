package io.rdma4j.engine;

/**
 * The target checked a write's CRC32C and the bytes that landed differ from the bytes sent (or the range it named was
 * not inside a live buffer of the target's, so nothing could be checked). The target got its {@link Notification} with
 * {@link Notification.Checksum#MISMATCH}; write the range again.
 */
public class ChecksumMismatchException extends TransferException {
    /** The target peer's name. */
    private final String peer;
    /** The write's notification tag. */
    private final long tag;
    /** The name of the target's buffer written. */
    private final String buffer;
    /** The first byte written in the target's buffer. */
    private final long offset;
    /** Bytes written. */
    private final long length;
    /** The CRC32C the writer computed (unsigned). */
    private final long expectedCrc32c;
    /** The CRC32C of the bytes that landed (unsigned), or -1. */
    private final long actualCrc32c;

    /**
     * Creates the exception; the message names every value.
     *
     * @param peer the target
     * @param tag the write's notification tag
     * @param buffer the name of the target's buffer written
     * @param offset the first byte written in {@code buffer}
     * @param length bytes written
     * @param expectedCrc32c the CRC32C the writer computed over its bytes (unsigned)
     * @param actualCrc32c the CRC32C of the bytes that landed (unsigned), or -1 when the target could not compute it
     */
    public ChecksumMismatchException(
            String peer, long tag, String buffer, long offset, long length, long expectedCrc32c, long actualCrc32c) {
        super("CRC32C mismatch on peer " + peer + ", tag " + tag + " (range " + offset + "+" + length + " of '" + buffer
                + "'): sent " + hex(expectedCrc32c) + ", landed "
                + (actualCrc32c < 0
                        ? "not computed (the range is not inside a live buffer of the target)"
                        : hex(actualCrc32c)));
        this.peer = peer;
        this.tag = tag;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.expectedCrc32c = expectedCrc32c;
        this.actualCrc32c = actualCrc32c;
    }

    private static String hex(long crc) {
        return String.format("0x%08x", crc);
    }

    /** {@return the target peer's name} */
    public String peer() {
        return peer;
    }

    /** {@return the write's notification tag} */
    public long tag() {
        return tag;
    }

    /** {@return the name of the target's buffer written} */
    public String buffer() {
        return buffer;
    }

    /** {@return the first byte written in the target's buffer} */
    public long offset() {
        return offset;
    }

    /** {@return bytes written} */
    public long length() {
        return length;
    }

    /** {@return the CRC32C the writer computed over the bytes it sent (unsigned)} */
    public long expectedCrc32c() {
        return expectedCrc32c;
    }

    /** {@return the CRC32C of the bytes that landed (unsigned), or -1 when the target could not compute it} */
    public long actualCrc32c() {
        return actualCrc32c;
    }
}
