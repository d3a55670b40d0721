package io.rdma4j.engine;

/**
 * A tag a peer sent after all bytes of its write landed in our memory.
 *
 * @param peer the writer
 * @param tag the tag it chose
 * @param buffer the name of our published buffer it wrote, or {@code null} if it named none we know
 * @param offset the first byte written
 * @param length bytes written
 * @param checksum {@code NOT_REQUESTED}, {@code VERIFIED} or {@code MISMATCH} (the CRC32C of our bytes differs from the
 *     writer's, or the range it named could not be read)
 * @param expectedCrc32c the CRC32C the writer computed over its bytes (unsigned), or -1 when none was requested
 * @param actualCrc32c the CRC32C of the bytes in our memory (unsigned), or -1 when none was requested or the named
 *     range is not inside a live buffer of ours
 */
public record Notification(
        String peer,
        long tag,
        String buffer,
        long offset,
        long length,
        Checksum checksum,
        long expectedCrc32c,
        long actualCrc32c) {
    /** Outcome of the optional CRC32C check. */
    public enum Checksum {
        /** The writer asked for no check. */
        NOT_REQUESTED,
        /** The CRC32C of the bytes in our memory equals the writer's. */
        VERIFIED,
        /** The CRC32C differs, or the range the writer named is not inside a live buffer of ours. */
        MISMATCH
    }

    /** Names the check's values in hex, as CRC32C is usually written, so a mismatch reads at a glance in a log. */
    @Override
    public String toString() {
        String crc = switch (checksum) {
            case NOT_REQUESTED -> "NOT_REQUESTED";
            case VERIFIED -> "VERIFIED (CRC32C 0x" + Long.toHexString(actualCrc32c) + ")";
            case MISMATCH ->
                "MISMATCH (writer's CRC32C 0x" + Long.toHexString(expectedCrc32c) + ", ours "
                        + (actualCrc32c < 0
                                ? "not computed: the range is not inside a live buffer"
                                : "0x" + Long.toHexString(actualCrc32c))
                        + ")";
        };
        return "Notification[peer=" + peer + ", tag=" + tag + ", buffer=" + buffer + ", offset=" + offset + ", length="
                + length + ", checksum=" + crc + "]";
    }
}
