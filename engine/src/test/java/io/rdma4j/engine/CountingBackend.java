package io.rdma4j.engine;

import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.ForwardingEngineBackend;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps a real backend and counts the data writes the engine posts on it: single ones, and vectored ones with their
 * pieces and the most bytes one carried. Everything goes to the real backend unchanged.
 */
final class CountingBackend extends ForwardingEngineBackend {
    final AtomicLong single = new AtomicLong();
    final AtomicLong vectors = new AtomicLong();
    final AtomicLong pieces = new AtomicLong();
    final AtomicLong largestVector = new AtomicLong();

    CountingBackend(EngineBackend inner) {
        super(inner);
    }

    void reset() {
        single.set(0);
        vectors.set(0);
        pieces.set(0);
        largestVector.set(0);
    }

    @Override
    public int postWrite(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        int rc =
                inner.postWrite(lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
        if (rc == OK) {
            single.incrementAndGet();
        }
        return rc;
    }

    @Override
    public int postWriteVector(
            int lane,
            int connection,
            int localHandle,
            long[] localAddresses,
            long[] remoteAddresses,
            long[] lengths,
            int count,
            long remoteKey,
            long context) {
        int rc = inner.postWriteVector(
                lane, connection, localHandle, localAddresses, remoteAddresses, lengths, count, remoteKey, context);
        if (rc == OK) {
            vectors.incrementAndGet();
            pieces.addAndGet(count);
            long bytes = 0;
            for (int i = 0; i < count; i++) {
                bytes += lengths[i];
            }
            largestVector.accumulateAndGet(bytes, Math::max);
        }
        return rc;
    }

    @Override
    public String toString() {
        return single + " single writes, " + vectors + " vectored ones of " + pieces + " pieces (largest "
                + largestVector + " bytes)";
    }
}
