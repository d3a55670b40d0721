package io.rdma4j.engine;

import io.rdma4j.InvalidArgumentException;
import java.time.Duration;

/**
 * Options of one transfer; immutable, built with the {@code with...} methods from {@link #DEFAULT}.
 *
 * @param deadline the transfer fails with {@link TransferTimeoutException} when not done within it; {@code null} for
 *     none
 * @param notifies whether the target receives {@link #tag()} once every byte landed
 * @param tag the notification tag (any 64-bit value)
 * @param crc32c send the CRC32C of the transferred range with the notification for the target to verify (needs
 *     {@link #notifies()}); the verdict, with both CRCs, is in the target's {@link Notification}, and the writer's
 *     transfer completes only once the target's verdict is read back (one more small RDMA read, repeated until the
 *     target has checked the range): normally when verified, with {@link ChecksumMismatchException} when the bytes that
 *     landed differ. The {@link #deadline()} covers that wait too
 */
public record TransferOptions(Duration deadline, boolean notifies, long tag, boolean crc32c) {
    public static final TransferOptions DEFAULT = new TransferOptions(null, false, 0, false);

    /**
     * Checks that the deadline is positive and that a checksum comes with a tag.
     *
     * @throws io.rdma4j.InvalidArgumentException when the deadline is zero or negative, or {@code crc32c} is set
     *     without {@code notifies}
     */
    public TransferOptions {
        if (deadline != null && (deadline.isNegative() || deadline.isZero())) {
            throw new InvalidArgumentException(
                    "deadline must be positive, got " + deadline + ": pass a positive duration, or null for none");
        }
        if (crc32c && !notifies) {
            throw new InvalidArgumentException(
                    "crc32c is verified by the target when the notification arrives: set a tag with withTag(...) too");
        }
    }

    /**
     * {@return these options with a deadline}
     *
     * @param d the deadline, or {@code null} for none
     * @throws io.rdma4j.InvalidArgumentException when {@code d} is zero or negative
     */
    public TransferOptions withDeadline(Duration d) {
        return new TransferOptions(d, notifies, tag, crc32c);
    }

    /**
     * {@return these options with a completion-gated notification carrying {@code t}}
     *
     * @param t the tag
     */
    public TransferOptions withTag(long t) {
        return new TransferOptions(deadline, true, t, crc32c);
    }

    /**
     * {@return these options with the CRC32C of the range verified on the target, the writer's transfer failing with
     * {@link ChecksumMismatchException} when it differs}
     *
     * @throws io.rdma4j.InvalidArgumentException when these options carry no tag: set one with {@link #withTag} first
     */
    public TransferOptions withCrc32c() {
        return new TransferOptions(deadline, notifies, tag, true);
    }

    /**
     * {@return options with just a notification tag}
     *
     * @param t the tag
     */
    public static TransferOptions tag(long t) {
        return DEFAULT.withTag(t);
    }
}
