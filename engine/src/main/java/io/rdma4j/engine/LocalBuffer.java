package io.rdma4j.engine;

import java.lang.foreign.MemorySegment;

/**
 * Memory registered with the engine. Registrations are cached: registering a range inside one already registered
 * reuses it. {@link #close()} releases this handle; the memory is deregistered once no handle and no transfer uses it
 * and the cache evicts it. Host memory today; GPU memory will come through the same type.
 */
public interface LocalBuffer extends AutoCloseable {
    /** @return the registered memory */
    MemorySegment segment();

    /** @return its length in bytes */
    long length();

    /** @return where it lives (drives lane choice) */
    MemoryLocation location();

    /** @return how long the backend took to register the underlying range (0 when this handle reused a cached one) */
    long registrationNanos();

    /** @return whether this handle reused a registration already in the cache */
    boolean reused();

    @Override
    void close();
}
