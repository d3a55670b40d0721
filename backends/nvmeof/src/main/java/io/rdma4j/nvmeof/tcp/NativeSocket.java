package io.rdma4j.nvmeof.tcp;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;

/**
 * A non-blocking Linux TCP socket driven through libc by FFM, for a queue that sends and receives on its caller's
 * thread: {@code sendmsg} with a gathering list of raw addresses, {@code recv} into raw memory, {@code poll} to wait.
 * Every call on the data path passes primitives and preallocated native memory, so none allocates on the Java heap, and
 * each is one system call. Owned by one thread at a time; {@link #close} may come from any.
 */
final class NativeSocket implements AutoCloseable {
    private static final int AF_INET = 2, AF_INET6 = 10, SOCK_STREAM = 1, SOCK_NONBLOCK = 0x800, SOCK_CLOEXEC = 0x80000;
    private static final int IPPROTO_TCP = 6, TCP_NODELAY = 1, SOL_SOCKET = 1, SO_ERROR = 4;
    private static final int MSG_DONTWAIT = 0x40, MSG_NOSIGNAL = 0x4000;
    static final int EAGAIN = 11, EINTR = 4, EINPROGRESS = 115;
    static final short POLLIN = 1, POLLOUT = 4;
    /** {@code sizeof(struct iovec)} and {@code sizeof(struct msghdr)} on LP64 Linux. */
    static final int IOVEC = 16, MSGHDR = 56;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG;
    private static final MethodHandle SOCKET = bind("socket", FunctionDescriptor.of(I, I, I, I));
    private static final MethodHandle CONNECT = bind("connect", FunctionDescriptor.of(I, I, L, I));
    private static final MethodHandle BIND = bind("bind", FunctionDescriptor.of(I, I, L, I));
    private static final MethodHandle SETSOCKOPT = bind("setsockopt", FunctionDescriptor.of(I, I, I, I, L, I));
    private static final MethodHandle GETSOCKOPT = bind("getsockopt", FunctionDescriptor.of(I, I, I, I, L, L));
    private static final MethodHandle SENDMSG = bind("sendmsg", FunctionDescriptor.of(L, I, L, I));
    private static final MethodHandle RECV = bind("recv", FunctionDescriptor.of(L, I, L, L, I));
    /** recv taking the buffer as a segment: the call holds the segment's arena open while the kernel writes to it. */
    private static final MethodHandle RECV_INTO = bind("recv", FunctionDescriptor.of(L, I, ValueLayout.ADDRESS, L, I));

    private static final MethodHandle RECVMSG = bind("recvmsg", FunctionDescriptor.of(L, I, L, I));
    private static final MethodHandle POLL = bind("poll", FunctionDescriptor.of(I, L, L, I));
    private static final MethodHandle CLOSE = bind("close", FunctionDescriptor.of(I, I));
    private static final MethodHandle EVENTFD = bind("eventfd", FunctionDescriptor.of(I, I, I));
    /**
     * Without errno capture: a signal's write cannot fail in a way its caller could act on, and any thread calls it.
     */
    private static final MethodHandle WRITE = LINKER.downcallHandle(
            LIBC.find("write").orElseThrow(() -> new UnsatisfiedLinkError("libc has no write")),
            FunctionDescriptor.of(L, I, L, L));

    private static final MethodHandle READ = bind("read", FunctionDescriptor.of(L, I, L, L));
    private static final int EFD_NONBLOCK = 0x800, EFD_CLOEXEC = 0x80000;

    /**
     * The socket's own native state; freed by the collector, so a late call from the owner never meets freed memory.
     */
    private final Arena arena = Arena.ofAuto();

    private final int fd;
    /** errno of this socket's last failed call; one owner thread at a time, so one capture. */
    private final MemorySegment errno = Errno.newCapture(arena);

    private final MemorySegment msghdr = arena.allocate(MSGHDR, 8);
    /** A receive's own {@code msghdr} and its two {@code iovec}s (the caller's memory, then a buffer). */
    private final MemorySegment rxMsghdr = arena.allocate(MSGHDR + 2 * IOVEC, 8);
    /** Two {@code struct pollfd}: the socket, and a wake-up descriptor when one is given. */
    private final MemorySegment pollfd = arena.allocate(16, 8);

    private volatile boolean closed;

    private NativeSocket(int fd) {
        this.fd = fd;
        pollfd.set(I, 0, fd);
        rxMsghdr.set(L, 16, rxMsghdr.address() + MSGHDR);
        rxMsghdr.set(L, 24, 2);
    }

    private static MethodHandle bind(String name, FunctionDescriptor fd) {
        MemorySegment addr = LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(addr, fd, Errno.OPTION);
    }

    /**
     * Connects to {@code address} within {@code timeout}, with TCP_NODELAY, leaving from {@code source} when not null.
     *
     * @throws IOException naming the system's reason when it cannot
     */
    static NativeSocket connect(InetSocketAddress address, InetAddress source, Duration timeout) throws IOException {
        if (address.isUnresolved()) {
            throw new IOException("cannot resolve " + address.getHostString());
        }
        InetAddress ip = address.getAddress();
        int family = ip instanceof Inet6Address ? AF_INET6 : AF_INET;
        int fd;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            fd = (int) SOCKET.invokeExact(cap, family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                throw failed("socket", Errno.read(cap));
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        NativeSocket s = new NativeSocket(fd);
        try {
            s.open(address, source, timeout);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private void open(InetSocketAddress address, InetAddress source, Duration timeout) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment one = a.allocate(I);
            one.set(I, 0, 1);
            check((int) SETSOCKOPT.invokeExact(errno, fd, IPPROTO_TCP, TCP_NODELAY, one.address(), 4), "TCP_NODELAY");
            if (source != null) {
                MemorySegment sa = sockaddr(a, source, 0);
                check((int) BIND.invokeExact(errno, fd, sa.address(), (int) sa.byteSize()), "bind to " + source);
            }
            MemorySegment sa = sockaddr(a, address.getAddress(), address.getPort());
            int rc = (int) CONNECT.invokeExact(errno, fd, sa.address(), (int) sa.byteSize());
            if (rc != 0 && Errno.read(errno) != EINPROGRESS) {
                throw failed("connect", Errno.read(errno));
            }
            if (rc != 0) {
                long ms = Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
                if (!await(POLLOUT, (int) ms)) {
                    throw new IOException("connect timed out after " + ms + " ms");
                }
                MemorySegment err = a.allocate(I);
                MemorySegment len = a.allocate(I);
                len.set(I, 0, 4);
                check(
                        (int) GETSOCKOPT.invokeExact(errno, fd, SOL_SOCKET, SO_ERROR, err.address(), len.address()),
                        "SO_ERROR");
                if (err.get(I, 0) != 0) {
                    throw failed("connect", err.get(I, 0));
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    private void check(int rc, String what) throws IOException {
        if (rc != 0) {
            throw failed(what, Errno.read(errno));
        }
    }

    private static IOException failed(String call, int errno) {
        return new IOException(call + " failed: error " + errno + " (" + Libc.strerror(errno) + ")");
    }

    private static MemorySegment sockaddr(Arena a, InetAddress ip, int port) {
        byte[] raw = ip.getAddress();
        MemorySegment sa;
        if (ip instanceof Inet4Address) {
            sa = a.allocate(16, 4);
            sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET);
            MemorySegment.copy(raw, 0, sa, ValueLayout.JAVA_BYTE, 4, 4);
        } else {
            sa = a.allocate(28, 4);
            sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET6);
            MemorySegment.copy(raw, 0, sa, ValueLayout.JAVA_BYTE, 8, 16);
            sa.set(I, 24, ((Inet6Address) ip).getScopeId());
        }
        sa.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
        return sa;
    }

    /**
     * Sends what {@code count} iovecs at {@code iov} point at, without blocking.
     *
     * @return bytes sent, 0 when the socket's buffer is full
     * @throws IOException when the connection is broken
     */
    long send(long iov, int count) throws IOException {
        msghdr.set(L, 16, iov);
        msghdr.set(L, 24, count);
        while (true) {
            long n;
            try {
                n = (long) SENDMSG.invokeExact(errno, fd, msghdr.address(), MSG_DONTWAIT | MSG_NOSIGNAL);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            if (n >= 0) {
                return n;
            }
            int e = Errno.read(errno);
            if (e == EAGAIN) {
                return 0;
            }
            if (e != EINTR) {
                throw failed("sendmsg", e);
            }
        }
    }

    /**
     * Receives up to {@code length} bytes into {@code address} without blocking.
     *
     * @return bytes received, 0 when none are waiting, -1 when the peer closed the connection
     * @throws IOException when the connection is broken
     */
    long receive(long address, long length) throws IOException {
        while (true) {
            long n;
            try {
                n = (long) RECV.invokeExact(errno, fd, address, length, MSG_DONTWAIT);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            long r = received(n, "recv");
            if (r != RETRY) {
                return r;
            }
        }
    }

    /**
     * Receives up to {@code into.byteSize()} bytes into {@code into} without blocking. The segment goes to the system
     * call as a segment, not an address: its arena cannot close while the kernel writes into it (a {@code close()} from
     * another thread meanwhile fails in that thread), so memory that any thread may free is safe to receive into.
     *
     * @return bytes received, 0 when none are waiting, -1 when the peer closed the connection
     * @throws IOException when the connection is broken
     */
    long receive(MemorySegment into) throws IOException {
        while (true) {
            long n;
            try {
                n = (long) RECV_INTO.invokeExact(errno, fd, into, into.byteSize(), MSG_DONTWAIT);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            long r = received(n, "recv");
            if (r != RETRY) {
                return r;
            }
        }
    }

    /**
     * Receives up to {@code length} bytes into {@code address} and, in the same call, up to {@code moreLength} more
     * into {@code more} ({@code recvmsg} with two {@code iovec}s), without blocking: a PDU's data straight into the
     * caller's memory and whatever follows it into a buffer.
     *
     * @return bytes received in all, 0 when none are waiting, -1 when the peer closed the connection
     * @throws IOException when the connection is broken
     */
    long receive(long address, long length, long more, long moreLength) throws IOException {
        MemorySegment m = rxMsghdr;
        m.set(L, MSGHDR, address);
        m.set(L, MSGHDR + 8, length);
        m.set(L, MSGHDR + IOVEC, more);
        m.set(L, MSGHDR + IOVEC + 8, moreLength);
        while (true) {
            long n;
            try {
                n = (long) RECVMSG.invokeExact(errno, fd, m.address(), MSG_DONTWAIT);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            long r = received(n, "recvmsg");
            if (r != RETRY) {
                return r;
            }
        }
    }

    /** {@link #received}'s answer when a receive was interrupted (EINTR) and must be made again. */
    private static final long RETRY = -2;

    /**
     * What a receive returns for its system call's result {@code n}.
     *
     * @return bytes received, 0 when none were waiting, -1 when the peer closed, or {@link #RETRY} after EINTR
     * @throws IOException when the connection is broken
     */
    private long received(long n, String call) throws IOException {
        if (n > 0) {
            return n;
        }
        if (n == 0) {
            return -1;
        }
        int e = Errno.read(errno);
        if (e == EAGAIN) {
            return 0;
        }
        if (e != EINTR) {
            throw failed(call, e);
        }
        return RETRY;
    }

    /**
     * Waits until the socket is ready for {@code events} ({@link #POLLIN}, {@link #POLLOUT}) or an error, or
     * {@code timeoutMs} passed (-1: no limit).
     *
     * @return false when the time ran out
     */
    boolean await(short events, int timeoutMs) throws IOException {
        return await(events, timeoutMs, -1);
    }

    /**
     * Waits as {@link #await(short, int)} does, and also until {@code wakeFd} (an {@link Wakeup}'s descriptor; -1:
     * none) is readable.
     */
    boolean await(short events, int timeoutMs, int wakeFd) throws IOException {
        pollfd.set(ValueLayout.JAVA_SHORT, 4, events);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        pollfd.set(I, 8, wakeFd);
        pollfd.set(ValueLayout.JAVA_SHORT, 12, POLLIN);
        pollfd.set(ValueLayout.JAVA_SHORT, 14, (short) 0);
        int rc;
        try {
            rc = (int) POLL.invokeExact(errno, pollfd.address(), wakeFd < 0 ? 1L : 2L, timeoutMs);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        if (rc < 0) {
            int e = Errno.read(errno);
            if (e == EINTR) {
                return true; // the caller looks again
            }
            throw failed("poll", e);
        }
        return rc > 0;
    }

    /** {@return whether the last {@link #await(short, int, int)} found its wake descriptor readable} */
    boolean woken() {
        return (pollfd.get(ValueLayout.JAVA_SHORT, 14) & POLLIN) != 0;
    }

    /** Closes the descriptor once; a thread blocked in {@link #await} on it wakes within its timeout. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            int ignored = (int) CLOSE.invokeExact(errno, fd);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * An {@code eventfd}: one thread wakes another that waits in {@link #await(short, int, int)}. Signalling is one
     * {@code write}; the waiter clears it with one {@code read}.
     */
    static final class Wakeup implements AutoCloseable {
        private final Arena arena = Arena.ofAuto();
        private final MemorySegment one = arena.allocate(8, 8);
        private final MemorySegment sink = arena.allocate(8, 8);
        private final MemorySegment capture = Errno.newCapture(arena);
        private final int fd;
        private volatile boolean closed;

        Wakeup() {
            int f;
            try {
                f = (int) EVENTFD.invokeExact(capture, 0, EFD_NONBLOCK | EFD_CLOEXEC);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            if (f < 0) {
                throw new IllegalStateException("eventfd failed: error " + Errno.read(capture) + " ("
                        + Libc.strerror(Errno.read(capture)) + "): raise the open-files limit (ulimit -n)");
            }
            fd = f;
            one.set(L, 0, 1L);
        }

        int fd() {
            return fd;
        }

        /** Wakes the waiter (any thread; its own capture is not used, as several threads may call this at once). */
        synchronized void signal() {
            if (closed) {
                return; // its descriptor may belong to another file by now
            }
            try {
                long ignored = (long) WRITE.invokeExact(fd, one.address(), 8L);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }

        /** Clears a signal (the waiter's thread only). */
        void clear() {
            try {
                long ignored = (long) READ.invokeExact(capture, fd, sink.address(), 8L);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                int ignored = (int) CLOSE.invokeExact(capture, fd);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
        }
    }
}
