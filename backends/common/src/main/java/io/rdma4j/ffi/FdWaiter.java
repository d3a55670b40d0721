package io.rdma4j.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Sleeps in the kernel until one of some file descriptors turns readable, a timeout passes, or another thread calls
 * {@link #wake()}: {@code ppoll} over the descriptors and an {@code eventfd} of its own. One thread waits; any thread
 * wakes. Nothing is allocated per wait.
 *
 * <p>Linux only. The caller keeps the descriptors open for as long as it waits on them.
 */
public final class FdWaiter implements AutoCloseable {
    /** {@code int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo_p, const sigset_t *sigmask);} */
    private static final MethodHandle PPOLL = Libc.bind(
            "ppoll",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG));
    /** {@code int eventfd(unsigned int initval, int flags);} */
    private static final MethodHandle EVENTFD = Libc.bind(
            "eventfd", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    /** {@code ssize_t read(int fd, void *buf, size_t count);} and {@code write} alike. */
    private static final MethodHandle READ = Libc.bind(
            "read",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));

    private static final MethodHandle WRITE = Libc.bind(
            "write",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    /** {@code int close(int fd);} */
    private static final MethodHandle CLOSE =
            Libc.bind("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    private static final int EFD_CLOEXEC = 0x80000;
    private static final int EFD_NONBLOCK = 0x800;
    private static final short POLLIN = 0x1;
    /** {@code struct pollfd { int fd; short events; short revents; }} */
    private static final long POLLFD_SIZE = 8;

    private final Arena arena = Arena.ofShared();
    private final int count;
    private final int eventFd;
    private final MemorySegment pollFds;
    private final MemorySegment timespec;
    /** The wait's 8-byte eventfd counter buffer, and the waker's; separate so a wake never races a drain. */
    private final MemorySegment drained;

    private final MemorySegment one;
    private volatile boolean closed;

    /** Waits on {@code fds} (each must stay open while this waits) and its own wake-up descriptor. */
    public FdWaiter(int... fds) {
        for (int fd : fds) {
            if (fd < 0) {
                throw new IllegalArgumentException(
                        "file descriptor " + fd + " is not one: a wait needs open descriptors");
            }
        }
        int e;
        try {
            e = (int) EVENTFD.invokeExact(0, EFD_CLOEXEC | EFD_NONBLOCK);
        } catch (Throwable t) {
            throw unchecked(t);
        }
        if (e < 0) {
            arena.close();
            throw new IllegalStateException("eventfd failed: the process may be out of file descriptors");
        }
        this.eventFd = e;
        this.count = fds.length + 1;
        this.pollFds = arena.allocate(POLLFD_SIZE * count, 8);
        for (int i = 0; i < count; i++) {
            pollFds.set(ValueLayout.JAVA_INT, i * POLLFD_SIZE, i < fds.length ? fds[i] : e);
            pollFds.set(ValueLayout.JAVA_SHORT, i * POLLFD_SIZE + 4, POLLIN);
        }
        this.timespec = arena.allocate(16, 8);
        this.drained = arena.allocate(8, 8);
        this.one = arena.allocate(8, 8);
        one.set(ValueLayout.JAVA_LONG, 0, 1);
    }

    /**
     * Blocks until a descriptor is readable, {@link #wake()} was called (since the last wait), or {@code nanos} passed.
     *
     * @return whether something happened before the timeout
     */
    public boolean await(long nanos) {
        if (closed) {
            return true;
        }
        long n = Math.max(0, nanos);
        timespec.set(ValueLayout.JAVA_LONG, 0, n / 1_000_000_000L);
        timespec.set(ValueLayout.JAVA_LONG, 8, n % 1_000_000_000L);
        int rc;
        try {
            rc = (int) PPOLL.invokeExact(pollFds.address(), (long) count, timespec.address(), 0L);
        } catch (Throwable t) {
            throw unchecked(t);
        }
        if (rc <= 0) {
            return rc < 0; // -1: EINTR, count it as a wake
        }
        long last = (count - 1) * POLLFD_SIZE;
        if ((pollFds.get(ValueLayout.JAVA_SHORT, last + 6) & POLLIN) != 0) {
            try {
                long ignored = (long) READ.invokeExact(eventFd, drained.address(), 8L);
            } catch (Throwable t) {
                throw unchecked(t);
            }
        }
        return true;
    }

    /** Ends the current or next {@link #await} at once; from any thread (never a write to a closed descriptor). */
    public synchronized void wake() {
        if (closed) {
            return;
        }
        try {
            long ignored = (long) WRITE.invokeExact(eventFd, one.address(), 8L);
        } catch (Throwable t) {
            throw unchecked(t);
        }
    }

    /**
     * Closes the wake-up descriptor; the caller's descriptors stay theirs. Call once the waiting thread has stopped.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            int ignored = (int) CLOSE.invokeExact(eventFd);
        } catch (Throwable t) {
            throw unchecked(t);
        } finally {
            arena.close();
        }
    }

    private static RuntimeException unchecked(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new AssertionError(t);
    }
}
