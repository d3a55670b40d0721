package io.rdma4j.nvmeof.tcp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a polled queue has yet to send, as a list of {@code struct iovec} in native memory: capsule headers, data in the
 * caller's memory, digests, in the order they go on the wire. {@link #flush} hands as much as the socket takes to one
 * {@code sendmsg}, so every capsule queued since the last flush leaves in one gathering system call. Sized by its owner
 * so that it cannot overflow: each command has at most its capsule or one R2T's answer waiting.
 */
final class SendRing {
    /** Linux's IOV_MAX: the most iovecs one call takes. */
    private static final int IOV_MAX = 1024;

    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG;

    private final MemorySegment iov;
    private final long base;
    private final int capacity;
    /** The first entry not yet sent (maybe sent in part: its iovec was advanced) and one past the last. */
    private int head, tail;

    /** @param capacity the most entries ever waiting at once */
    SendRing(Arena arena, int capacity) {
        this.capacity = capacity;
        this.iov = arena.allocate((long) capacity * NativeSocket.IOVEC, 8);
        this.base = iov.address();
    }

    /** @return whether nothing waits to be sent */
    boolean isEmpty() {
        return head == tail;
    }

    /**
     * Appends {@code length} bytes at {@code address}.
     *
     * @throws IllegalStateException when the ring is full, which its sizing rules out
     */
    void add(long address, long length) {
        if (tail == capacity) {
            compact();
        }
        long at = (long) tail * NativeSocket.IOVEC;
        iov.set(L, at, address);
        iov.set(L, at + 8, length);
        tail++;
    }

    private void compact() {
        if (head == 0) {
            throw new IllegalStateException("send ring of " + capacity + " entries overflowed");
        }
        MemorySegment.copy(iov, (long) head * NativeSocket.IOVEC, iov, 0, (long) (tail - head) * NativeSocket.IOVEC);
        tail -= head;
        head = 0;
    }

    /**
     * Sends until the ring is empty or the socket takes no more.
     *
     * @return whether the ring is empty
     */
    boolean flush(NativeSocket socket) throws IOException {
        while (head < tail) {
            int count = Math.min(tail - head, IOV_MAX);
            long sent = socket.send(base + (long) head * NativeSocket.IOVEC, count);
            if (sent == 0) {
                return false;
            }
            advance(sent);
        }
        head = 0;
        tail = 0;
        return true;
    }

    /** Drops {@code sent} bytes from the front: whole entries, then part of the next. */
    private void advance(long sent) {
        while (sent > 0) {
            long at = (long) head * NativeSocket.IOVEC;
            long len = iov.get(L, at + 8);
            if (sent < len) {
                iov.set(L, at, iov.get(L, at) + sent);
                iov.set(L, at + 8, len - sent);
                return;
            }
            sent -= len;
            head++;
        }
    }

    /** Forgets everything waiting (the connection failed: nothing more goes out). */
    void clear() {
        head = 0;
        tail = 0;
    }
}
