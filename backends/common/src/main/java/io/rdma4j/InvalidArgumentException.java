package io.rdma4j;

/**
 * An argument rdma4j checks was wrong: a range outside a buffer, a name that breaks the naming rule, a size or count
 * out of bounds, options that do not go together, a buffer or peer of another engine. Thrown before anything is posted
 * or changed; the message names the value and what would be accepted. Nothing is wrong with the machine or the peer:
 * fix the call and make it again.
 *
 * <p>It extends {@link Rdma4jException}, not {@link IllegalArgumentException} (a class cannot extend both): one
 * {@code catch (Rdma4jException e)} handles every failure of rdma4j, whatever its kind. A {@code null} argument is not
 * reported with this but with a {@link NullPointerException}, as the JDK does.
 */
public class InvalidArgumentException extends Rdma4jException {
    /**
     * Creates the exception.
     *
     * @param message what is wrong with which argument, and what would be accepted
     */
    public InvalidArgumentException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what is wrong with which argument, and what would be accepted
     * @param cause the failure underneath (e.g. the same check failing one level down)
     */
    public InvalidArgumentException(String message, Throwable cause) {
        super(message, cause);
    }
}
