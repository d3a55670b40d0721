package io.rdma4j.ibverbs.cm;

import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_CHANNEL_FD;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_CONN_PRIVATE_DATA;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_CONN_PRIVATE_DATA_LEN;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_CONN_QP_NUM;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_EVENT;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_ID;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_LISTEN_ID;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.EVENT_STATUS;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_CONNECT_REQUEST;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_CONNECT_RESPONSE;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ESTABLISHED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_REJECTED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_EVENT_CHANNEL;

import io.rdma4j.Closeables;
import io.rdma4j.ClosedException;
import io.rdma4j.Rdma4jException;
import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.Libc;
import io.rdma4j.ibverbs.VerbsException;
import io.rdma4j.ibverbs.ffi.LibRdmacm;
import io.rdma4j.ibverbs.ffi.Poll;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An RDMA-CM event channel ({@code struct rdma_event_channel}). Events are read with a timeout ({@link #poll}), copied
 * into {@link CmEvent}s and acknowledged at once. Closing it closes the ids created on it first.
 */
public final class EventChannel implements AutoCloseable {
    final MemorySegment channel;
    private final int fd;
    final Map<Long, CmId> ids = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private EventChannel(MemorySegment channel) {
        this.channel = channel.reinterpret(RDMA_EVENT_CHANNEL.byteSize());
        this.fd = this.channel.get(ValueLayout.JAVA_INT, EVENT_CHANNEL_FD);
    }

    /** {@code rdma_create_event_channel}. */
    public static EventChannel create() {
        LibRdmacm.LIB.ensureAvailable();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment ch =
                    (MemorySegment) LibRdmacm.rdma_create_event_channel.handle().invokeExact(cap);
            if (ch.equals(MemorySegment.NULL)) {
                int errno = Errno.read(cap);
                throw new VerbsException("rdma_create_event_channel", "", errno);
            }
            return new EventChannel(ch);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    void ensureOpen() {
        if (closed) {
            throw new ClosedException("EventChannel");
        }
    }

    public int fd() {
        ensureOpen();
        return fd;
    }

    /**
     * Waits up to {@code timeoutMs} for an event ({@code rdma_get_cm_event}), copies it and acknowledges it
     * ({@code rdma_ack_cm_event}).
     *
     * @return the event, or null on timeout
     */
    public CmEvent poll(long timeoutMs) {
        ensureOpen();
        if (!Poll.readable(fd, timeoutMs)) {
            return null;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ValueLayout.ADDRESS);
            MemorySegment cap = Errno.newCapture(a);
            int rc = (int) LibRdmacm.rdma_get_cm_event.handle().invokeExact(cap, channel, out);
            if (rc != 0) {
                throw new VerbsException("rdma_get_cm_event", "", Errno.read(cap));
            }
            MemorySegment ev = out.get(ValueLayout.ADDRESS, 0).reinterpret(RDMA_CM_EVENT.byteSize());
            int type = ev.get(ValueLayout.JAVA_INT, EVENT_EVENT);
            int status = ev.get(ValueLayout.JAVA_INT, EVENT_STATUS);
            MemorySegment idPtr = ev.get(ValueLayout.ADDRESS, EVENT_ID);
            MemorySegment listenPtr = ev.get(ValueLayout.ADDRESS, EVENT_LISTEN_ID);
            byte[] priv = new byte[0];
            int qpNum = 0;
            if (type == RDMA_CM_EVENT_CONNECT_REQUEST
                    || type == RDMA_CM_EVENT_ESTABLISHED
                    || type == RDMA_CM_EVENT_REJECTED
                    || type == RDMA_CM_EVENT_CONNECT_RESPONSE) {
                MemorySegment p = ev.get(ValueLayout.ADDRESS, EVENT_CONN_PRIVATE_DATA);
                int len = Byte.toUnsignedInt(ev.get(ValueLayout.JAVA_BYTE, EVENT_CONN_PRIVATE_DATA_LEN));
                if (!p.equals(MemorySegment.NULL) && len > 0) {
                    priv = p.reinterpret(len).toArray(ValueLayout.JAVA_BYTE);
                }
                qpNum = ev.get(ValueLayout.JAVA_INT, EVENT_CONN_QP_NUM);
            }
            CmId id = type == RDMA_CM_EVENT_CONNECT_REQUEST ? new CmId(this, idPtr) : ids.get(idPtr.address());
            CmId listen = listenPtr.equals(MemorySegment.NULL) ? null : ids.get(listenPtr.address());
            int ack = (int) LibRdmacm.rdma_ack_cm_event.handle().invokeExact(cap, ev);
            if (ack != 0) {
                throw new VerbsException("rdma_ack_cm_event", "", Errno.read(cap));
            }
            if (id != null) {
                id.onEvent(type);
            }
            return new CmEvent(type, status, id, listen, priv, qpNum);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Waits for the next event and fails unless it is of {@code type}.
     *
     * @throws Rdma4jException on timeout or another event, naming both and the status
     */
    public CmEvent expect(int type, long timeoutMs) {
        ensureOpen();
        CmEvent e = poll(timeoutMs);
        if (e == null) {
            throw new Rdma4jException(
                    "no RDMA-CM event within " + timeoutMs + " ms while waiting for " + CmEvent.name(type));
        }
        if (e.type() != type) {
            String st = e.status() < 0
                    ? " (status " + e.status() + ": " + Libc.strerror(-e.status()) + ")"
                    : e.status() != 0 ? " (status " + e.status() + ")" : "";
            throw new Rdma4jException("expected " + CmEvent.name(type) + " but got " + e.name() + st);
        }
        return e;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<AutoCloseable> all = new ArrayList<>(ids.values());
        all.add(this::destroy);
        Closeables.closeAll(all);
    }

    private void destroy() {
        try {
            LibRdmacm.rdma_destroy_event_channel.handle().invokeExact(channel);
        } catch (Throwable t) {
            throw t instanceof RuntimeException r ? r : new IllegalStateException(t);
        }
    }
}
