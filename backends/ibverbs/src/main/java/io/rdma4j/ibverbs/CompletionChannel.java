package io.rdma4j.ibverbs;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.Poll;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): sleep until a CQ that asked for notification gets a
 * completion.
 */
public final class CompletionChannel extends NativeObject {
    private final Context context;
    private final int fd;
    private final Map<Long, CompletionQueue> cqs = new ConcurrentHashMap<>();
    /** getEvent's out-parameters (the CQ, then its context) and errno capture, reused under the buffer's lock. */
    private final Arena eventArena = Arena.ofShared();

    private final MemorySegment eventBuf = eventArena.allocate(16, 8);
    private final MemorySegment eventCapture = Errno.newCapture(eventArena);
    private final MemorySegment eventContext = eventBuf.asSlice(8);
    private final Poll.Waiter eventWait = new Poll.Waiter();
    /** The CQ the last event named: found again without a map lookup (which would box its address). */
    private volatile CompletionQueue lastCq;

    CompletionChannel(Context context, MemorySegment channel) {
        super("CompletionChannel(" + context.deviceName() + ")", channel, context);
        this.context = context;
        this.fd = channel.reinterpret(VerbsH.IBV_COMP_CHANNEL.byteSize())
                .get(ValueLayout.JAVA_INT, VerbsH.COMP_CHANNEL_FD);
    }

    public Context context() {
        ensureOpen();
        return context;
    }

    /** @return the channel's file descriptor, for an external poller */
    public int fd() {
        ensureOpen();
        return fd;
    }

    void register(CompletionQueue cq) {
        cqs.put(cq.handle.address(), cq);
    }

    void unregister(CompletionQueue cq) {
        cqs.remove(cq.handle.address());
        if (lastCq == cq) {
            lastCq = null;
        }
    }

    /**
     * Waits up to {@code timeoutMs} for a completion event ({@code ibv_get_cq_event}) and acknowledges it
     * ({@code ibv_ack_cq_events}). Re-arm the CQ with {@link CompletionQueue#requestNotify} before polling it empty.
     *
     * @return the CQ that has completions, or null on timeout
     */
    public CompletionQueue waitForEvent(long timeoutMs) {
        ensureOpen();
        if (!Poll.readable(fd, timeoutMs)) {
            return null;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cqOut = a.allocate(ValueLayout.ADDRESS);
            MemorySegment ctxOut = a.allocate(ValueLayout.ADDRESS);
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) LibIbverbs.ibv_get_cq_event.handle().invokeExact(cap, handle, cqOut, ctxOut);
            if (rc != 0) {
                throw new VerbsException("ibv_get_cq_event", "", Errno.read(cap));
            }
            MemorySegment cqPtr = cqOut.get(ValueLayout.ADDRESS, 0);
            LibIbverbs.ibv_ack_cq_events.handle().invokeExact(cqPtr, 1);
            return cqs.get(cqPtr.address());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Takes one completion event ({@code ibv_get_cq_event}) without acknowledging it, waiting up to {@code timeoutMs}
     * (0: only one already pending). The event counts against its CQ until {@link CompletionQueue#ackEvents()}: an
     * event loop acknowledges in batches, since {@code ibv_ack_cq_events} takes a lock, and closing the CQ acknowledges
     * the rest ({@code ibv_destroy_cq} would wait for them forever). With {@code timeoutMs} 0 it allocates nothing; one
     * thread at a time takes events. The standard loop: poll the CQ empty, {@link CompletionQueue#requestNotify}, poll
     * again (a completion may have landed before the arming), then wait here.
     *
     * @return the CQ that has completions, or null on timeout
     */
    public CompletionQueue getEvent(long timeoutMs) {
        ensureOpen();
        if (timeoutMs != 0 && !Poll.readable(fd, timeoutMs)) {
            return null;
        }
        synchronized (eventBuf) {
            if (timeoutMs == 0 && eventWait.readable(fd, -1, 0) == 0) {
                return null;
            }
            try {
                int rc = (int)
                        LibIbverbs.ibv_get_cq_event.handle().invokeExact(eventCapture, handle, eventBuf, eventContext);
                if (rc != 0) {
                    throw new VerbsException("ibv_get_cq_event", "", Errno.read(eventCapture));
                }
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
            long cqAddress = eventBuf.get(ValueLayout.JAVA_LONG, 0);
            CompletionQueue last = lastCq;
            CompletionQueue cq =
                    last != null && !last.isClosed() && last.handle.address() == cqAddress ? last : cqs.get(cqAddress);
            if (cq == null) {
                // a CQ this binding did not create on this channel: acknowledge at once, nobody else can
                try {
                    LibIbverbs.ibv_ack_cq_events.handle().invokeExact(MemorySegment.ofAddress(cqAddress), 1);
                } catch (Throwable t) {
                    throw Native.rethrow(t);
                }
                return null;
            }
            lastCq = cq;
            cq.eventTaken();
            return cq;
        }
    }

    @Override
    void destroy() {
        lastCq = null;
        synchronized (eventBuf) {
            eventWait.close();
        }
        eventArena.close();
        try {
            int rc = (int) LibIbverbs.ibv_destroy_comp_channel.handle().invokeExact(handle);
            if (rc != 0) {
                throw new VerbsException("ibv_destroy_comp_channel", "", rc);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
