package io.rdma4j.engine;

/**
 * A tag a peer sent after all bytes of its write landed in our memory.
 *
 * @param peer      the writer
 * @param tag       the tag it chose
 * @param buffer    the name of our published buffer it wrote, or {@code null} if it named none we know
 * @param offset    the first byte written
 * @param length    bytes written
 * @param checksum  {@code NOT_REQUESTED}, {@code VERIFIED} or {@code MISMATCH} (the CRC32C of our bytes differs from the writer's)
 */
public record Notification(String peer, long tag, String buffer, long offset, long length, Checksum checksum) {
    /** Outcome of the optional CRC32C check. */
    public enum Checksum { NOT_REQUESTED, VERIFIED, MISMATCH }
}
