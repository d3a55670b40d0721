package io.rdma4j.engine;

import io.rdma4j.engine.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;

/**
 * Memory registered with the engine. Registrations are cached: registering a range inside one already registered reuses
 * it. {@link #close()} releases this handle; the memory is deregistered once no handle and no transfer uses it and the
 * cache evicts it. Host memory, or device (GPU) memory registered with {@link TransferEngine#register(DeviceMemory)}.
 */
public interface LocalBuffer extends AutoCloseable {
    /**
     * {@return the registered memory}
     *
     * @throws UnsupportedOperationException for device memory, which the CPU cannot address (see {@link #device()}); a
     *     JDK exception, as {@link io.rdma4j.Rdma4jException} explains: no call on such a buffer ever works
     */
    MemorySegment segment();

    /**
     * {@return the device (GPU) memory this buffer registers ({@link TransferEngine#register(DeviceMemory)}), or null
     * for host memory}
     */
    default DeviceMemory device() {
        return null;
    }

    /** {@return its length in bytes} */
    long length();

    /** {@return where it lives (drives lane choice)} */
    MemoryLocation location();

    /** {@return how long the backend took to register the underlying range (0 when this handle reused a cached one)} */
    long registrationNanos();

    /** {@return whether this handle reused a registration already in the cache} */
    boolean reused();

    /**
     * Releases this handle; idempotent. Transfers already started keep the registration until they finish.
     *
     * @throws io.rdma4j.NativeCallException when deregistering the memory fails (only when this was its last user and
     *     the memory is already freed or superseded)
     */
    @Override
    void close();
}
