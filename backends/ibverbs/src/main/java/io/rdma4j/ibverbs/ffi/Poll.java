package io.rdma4j.ibverbs.ffi;

import io.rdma4j.ffi.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * libc {@code poll(2)} on one file descriptor, so the blocking event calls ({@code ibv_get_cq_event},
 * {@code ibv_get_async_event}, {@code rdma_get_cm_event}) can wait with a timeout: poll first, then read only when
 * ready.
 */
public final class Poll {
    /**
     * {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout);} with {@code struct pollfd { int fd; short events;
     * short revents; };}
     */
    private static final MethodHandle POLL = Linker.nativeLinker()
            .downcallHandle(
                    Linker.nativeLinker().defaultLookup().find("poll").orElseThrow(),
                    FunctionDescriptor.of(
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT),
                    Errno.OPTION);

    private static final short POLLIN = 1;
    private static final int EINTR = 4;

    private Poll() {}

    /**
     * Waits until {@code fd} is readable or {@code timeoutMs} passes (negative: forever).
     *
     * @return true when readable
     */
    public static boolean readable(int fd, long timeoutMs) {
        long deadline = timeoutMs < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMs * 1_000_000L;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(8, 4);
            MemorySegment cap = Errno.newCapture(a);
            while (true) {
                pfd.set(ValueLayout.JAVA_INT, 0, fd);
                pfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
                long left = timeoutMs < 0 ? -1 : Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
                int rc = (int) POLL.invokeExact(cap, pfd, 1L, (int) Math.min(Integer.MAX_VALUE, left));
                if (rc > 0) {
                    return true;
                }
                if (rc == 0) {
                    return false;
                }
                int errno = Errno.read(cap);
                if (errno != EINTR) {
                    throw new IllegalStateException("poll(fd=" + fd + ") failed: errno " + errno);
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Waits until {@code fd0} or {@code fd1} is readable (or has hung up or failed) or {@code timeoutMs} passes
     * (negative: forever), so one thread can watch, say, a completion channel and an RDMA-CM event channel.
     *
     * @return bit 0 set when {@code fd0} is ready, bit 1 when {@code fd1} is; 0 on timeout
     */
    public static int readable(int fd0, int fd1, long timeoutMs) {
        long deadline = timeoutMs < 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutMs * 1_000_000L;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(16, 4);
            MemorySegment cap = Errno.newCapture(a);
            while (true) {
                pfd.set(ValueLayout.JAVA_INT, 0, fd0);
                pfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
                pfd.set(ValueLayout.JAVA_INT, 8, fd1);
                pfd.set(ValueLayout.JAVA_SHORT, 12, POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 14, (short) 0);
                long left = timeoutMs < 0 ? -1 : Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
                int rc = (int) POLL.invokeExact(cap, pfd, 2L, (int) Math.min(Integer.MAX_VALUE, left));
                if (rc > 0) {
                    return (pfd.get(ValueLayout.JAVA_SHORT, 6) != 0 ? 1 : 0)
                            | (pfd.get(ValueLayout.JAVA_SHORT, 14) != 0 ? 2 : 0);
                }
                if (rc == 0) {
                    return 0;
                }
                int errno = Errno.read(cap);
                if (errno != EINTR) {
                    throw new IllegalStateException("poll(fds=" + fd0 + "," + fd1 + ") failed: errno " + errno);
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * A reusable {@code poll(2)} on up to two descriptors that allocates nothing per call, for a loop that waits often
     * (a polled queue waiting for its completion and RDMA-CM channels). One thread at a time uses it.
     */
    public static final class Waiter implements AutoCloseable {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment pfd = arena.allocate(16, 4);
        private final MemorySegment cap = Errno.newCapture(arena);

        /**
         * Waits until {@code fd0} or {@code fd1} (negative: none) is readable (or has hung up or failed) or
         * {@code timeoutMs} passes (0: just look; negative: forever). An interrupted wait returns 0, as a timeout.
         *
         * @return bit 0 set when {@code fd0} is ready, bit 1 when {@code fd1} is; 0 on timeout
         */
        public int readable(int fd0, int fd1, int timeoutMs) {
            pfd.set(ValueLayout.JAVA_INT, 0, fd0);
            pfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
            pfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
            pfd.set(ValueLayout.JAVA_INT, 8, fd1);
            pfd.set(ValueLayout.JAVA_SHORT, 12, POLLIN);
            pfd.set(ValueLayout.JAVA_SHORT, 14, (short) 0);
            int rc;
            try {
                rc = (int) POLL.invokeExact(cap, pfd, 2L, timeoutMs);
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            if (rc > 0) {
                return (pfd.get(ValueLayout.JAVA_SHORT, 6) != 0 ? 1 : 0)
                        | (pfd.get(ValueLayout.JAVA_SHORT, 14) != 0 ? 2 : 0);
            }
            if (rc < 0 && Errno.read(cap) != EINTR) {
                throw new IllegalStateException("poll(fds=" + fd0 + "," + fd1 + ") failed: errno " + Errno.read(cap));
            }
            return 0;
        }

        @Override
        public void close() {
            arena.close();
        }
    }
}
