package io.rdma4j.engine.spi;

/**
 * Memory registered on every lane of a backend. Peers address it through {@link #remoteAddress(int)} plus an offset and
 * {@link #remoteKey(int)} of the lane they target; locally it is named by {@link #handle()} in posting calls.
 * {@link #close()} deregisters it on every lane; the engine closes it only once nothing is in flight on it.
 */
public interface BackendRegistration extends AutoCloseable {
    /**
     * @return the backend's small non-negative number for this registration, passed as {@code localHandle} when posting
     */
    int handle();

    /** @return the registered memory's native address */
    long address();

    /** @return the registered length in bytes */
    long length();

    /**
     * @return the address a peer puts in its operations for byte 0 of this memory on {@code lane} (virtual address or 0
     *     for offset-addressed providers)
     */
    long remoteAddress(int lane);

    /** @return the remote key a peer passes with operations on {@code lane} */
    long remoteKey(int lane);

    @Override
    void close();
}
