package io.rdma4j;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Objects;

/**
 * Closing several resources the way the house style asks: every resource is attempted, the first failure is thrown and
 * the later ones are added to it as suppressed exceptions. Resources close in the order given (list children before
 * their parent); nulls are skipped, so a half-built object can pass the fields it has. A lone lambda would be taken for
 * an {@link Iterable}: cast it to {@code AutoCloseable}.
 *
 * <pre>{@code
 * public void close() {
 *     Closeables.closeAll(endpoint, completionQueue, domain);
 * }
 *
 * try {
 *     undo.add(domain.openCompletionQueue(depth));
 *     ...
 * } catch (RuntimeException | Error e) {
 *     throw Closeables.closeAllInto(e, undo); // the open's failure is the one reported
 * }
 * }</pre>
 */
public final class Closeables {
    private Closeables() {}

    /**
     * Closes every resource in order, even after one fails.
     *
     * @param resources closed in this order; null entries (and a null array) are skipped
     * @throws RuntimeException the first failure, with the later ones suppressed; a checked one is wrapped, an
     *     {@link IOException} in an {@link UncheckedIOException}, any other in an {@link Rdma4jException}
     * @throws Error the first failure when it is an error, with the later ones suppressed
     */
    public static void closeAll(AutoCloseable... resources) {
        closeAll(resources == null ? null : Arrays.asList(resources));
    }

    /**
     * As {@link #closeAll(AutoCloseable...)}, in the iteration order of {@code resources}.
     *
     * @param resources closed in iteration order; null entries (and a null iterable) are skipped
     */
    public static void closeAll(Iterable<? extends AutoCloseable> resources) {
        Throwable first = close(null, resources);
        if (first == null) {
            return;
        }
        switch (first) {
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            case IOException e -> throw new UncheckedIOException(closeFailed(e), e);
            default -> {
                if (first instanceof InterruptedException) {
                    Thread.currentThread().interrupt(); // the wrapper must not swallow the interrupt
                }
                throw new Rdma4jException(closeFailed(first), first);
            }
        }
    }

    /**
     * For a failure path (unwinding a half-built object): closes every resource in order and adds each close failure to
     * {@code failure} as a suppressed exception, so the failure that made us unwind stays the one reported.
     *
     * @param failure what went wrong first; not null
     * @param resources closed in this order; null entries (and a null array) are skipped
     * @return {@code failure}, for {@code throw Closeables.closeAllInto(e, a, b)}
     */
    public static <T extends Throwable> T closeAllInto(T failure, AutoCloseable... resources) {
        return closeAllInto(failure, resources == null ? null : Arrays.asList(resources));
    }

    /**
     * As {@link #closeAllInto(Throwable, AutoCloseable...)}, in the iteration order of {@code resources}.
     *
     * @param failure what went wrong first; not null
     * @param resources closed in iteration order; null entries (and a null iterable) are skipped
     * @return {@code failure}
     */
    public static <T extends Throwable> T closeAllInto(T failure, Iterable<? extends AutoCloseable> resources) {
        Objects.requireNonNull(failure, "failure");
        close(failure, resources);
        return failure;
    }

    /** Closes each resource; returns {@code first}, or the first failure when it was null, with the rest suppressed. */
    private static Throwable close(Throwable first, Iterable<? extends AutoCloseable> resources) {
        if (resources == null) {
            return first;
        }
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Throwable t) {
                if (first == null) {
                    first = t;
                } else if (t != first) { // a resource rethrowing what it was handed must not suppress itself
                    first.addSuppressed(t);
                }
            }
        }
        return first;
    }

    private static String closeFailed(Throwable t) {
        return "close failed: " + t;
    }
}
