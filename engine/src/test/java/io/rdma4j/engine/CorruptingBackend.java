package io.rdma4j.engine;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.ForwardingEngineBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wraps a real backend and, once armed, flips one byte of the next data write on its way to the peer: the write's bytes
 * are copied into scratch memory registered with the real backend, one byte is inverted there, and the real backend
 * sends the scratch copy. The writer's own buffer stays intact, as after a bit flip on the wire that the transport's
 * own checks missed. Everything else goes to the real backend. A fake only to inject the fault.
 *
 * <p>It can also make the engine's reads of the peer's CRC32C verdict words come back stale: the real read completes,
 * and the word it brought is zeroed before the engine sees the completion, as if the peer had never written it. A
 * verdict read is told from a credit read by its address: both read 8 bytes of the peer's inbox, whose consumed counter
 * sits on a 64-byte boundary (after the ring of 64-byte records) and whose first seven verdict words follow it, off
 * that boundary; tests that use this keep the ring under eight slots.
 */
final class CorruptingBackend extends ForwardingEngineBackend {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment scratch;
    private final BackendRegistration scratchRegistration;
    /** Byte of the next data write to invert, or -1 when disarmed. */
    private final AtomicLong armed = new AtomicLong(-1);

    private final AtomicLong corrupted = new AtomicLong();
    private volatile boolean staleWords;
    /** Local address of each stale 8-byte read in flight, by lane and context. */
    private final Map<Long, Long> staleReads = new ConcurrentHashMap<>();

    /** @param largestWrite the largest data write that can be corrupted (the engine's chunk size) */
    CorruptingBackend(EngineBackend inner, long largestWrite) {
        super(inner);
        this.scratch = arena.allocate(largestWrite, 4096);
        this.scratchRegistration = inner.register(scratch);
    }

    /** The next data write (not a notification) leaves with its byte {@code index} inverted. */
    void corruptNextWrite(long index) {
        armed.set(index);
    }

    /** From now on every verdict read completes with a zero word ({@code false}: reads are real again). */
    void staleVerdictReads(boolean on) {
        staleWords = on;
    }

    /** @return data writes sent corrupted so far */
    long corruptedWrites() {
        return corrupted.get();
    }

    /** Every data write goes through {@link #postWrite}, one piece at a time, so that any of them can be corrupted. */
    @Override
    public int writeVectorLimit(int lane) {
        return 1;
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
        long index = armed.getAndSet(-1);
        if (index < 0 || index >= length || length > scratch.byteSize()) {
            if (index >= 0) {
                armed.compareAndSet(-1, index); // too short or too long: leave it for a write it fits
            }
            return inner.postWrite(
                    lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
        }
        MemorySegment.copy(MemorySegment.ofAddress(localAddress).reinterpret(length), 0, scratch, 0, length);
        scratch.set(ValueLayout.JAVA_BYTE, index, (byte) ~scratch.get(ValueLayout.JAVA_BYTE, index));
        int rc = inner.postWrite(
                lane,
                connection,
                scratchRegistration.handle(),
                scratch.address(),
                length,
                remoteAddress,
                remoteKey,
                context);
        if (rc == OK) {
            corrupted.incrementAndGet();
        } else {
            armed.compareAndSet(-1, index); // the engine posts this write again: corrupt the retry
        }
        return rc;
    }

    @Override
    public String description() {
        return inner.description() + " (corrupting one write on request)";
    }

    @Override
    public int postWriteImmediate(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            int immediate,
            long context) {
        return inner.postWriteImmediate(
                lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, immediate, context);
    }

    @Override
    public int postRead(
            int lane,
            int connection,
            int localHandle,
            long localAddress,
            long length,
            long remoteAddress,
            long remoteKey,
            long context) {
        boolean stale = staleWords && length == 8 && remoteAddress % 64 != 0;
        if (stale) {
            staleReads.put((long) lane << 32 | context, localAddress);
        }
        int rc = inner.postRead(lane, connection, localHandle, localAddress, length, remoteAddress, remoteKey, context);
        if (stale && rc != OK) {
            staleReads.remove((long) lane << 32 | context);
        }
        return rc;
    }

    @Override
    public int poll(int lane, Completions out) {
        int n = inner.poll(lane, out);
        for (int i = 0; i < n && !staleReads.isEmpty(); i++) {
            Long at = out.kind[i] == Completions.REMOTE_IMMEDIATE
                    ? null
                    : staleReads.remove((long) lane << 32 | out.context[i]);
            if (at != null) {
                MemorySegment.ofAddress(at).reinterpret(8).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 0L);
            }
        }
        return n;
    }

    @Override
    public void close() {
        // deregister before freeing, then close the real backend
        Closeables.closeAll(scratchRegistration, inner, arena);
    }
}
