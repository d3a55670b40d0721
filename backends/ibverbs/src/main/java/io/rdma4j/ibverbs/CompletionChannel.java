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

/** A completion event channel ({@code struct ibv_comp_channel}): sleep until a CQ that asked for notification gets a completion. */
public final class CompletionChannel extends NativeObject {
    private final Context context;
    private final int fd;
    private final Map<Long, CompletionQueue> cqs = new ConcurrentHashMap<>();

    CompletionChannel(Context context, MemorySegment channel) {
        super("CompletionChannel(" + context.deviceName() + ")", channel, context);
        this.context = context;
        this.fd = channel.reinterpret(VerbsH.IBV_COMP_CHANNEL.byteSize()).get(ValueLayout.JAVA_INT, VerbsH.COMP_CHANNEL_FD);
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

    @Override
    void destroy() {
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
