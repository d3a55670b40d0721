package io.rdma4j.ffi;

import io.rdma4j.NativeCallException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** The few libc functions the groundwork needs: environment, signal dispositions, error texts, anonymous mappings. */
public final class Libc {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();

    /** {@code int setenv(const char *name, const char *value, int overwrite);} */
    private static final MethodHandle SETENV = bind(
            "setenv",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    /** {@code char *getenv(const char *name);} */
    private static final MethodHandle GETENV =
            bind("getenv", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    /** {@code int sigaction(int signum, const struct sigaction *act, struct sigaction *oldact);} */
    private static final MethodHandle SIGACTION = bind(
            "sigaction",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    /**
     * XSI {@code int strerror_r(int errnum, char *buf, size_t buflen);} (glibc exports it as {@code __xpg_strerror_r}).
     */
    private static final MethodHandle STRERROR_R = bind(
            "__xpg_strerror_r",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    /** {@code int prctl(int option, ...);} with the four {@code unsigned long} arguments Linux reads. */
    private static final MethodHandle PRCTL = LINKER.downcallHandle(
            LIBC.find("prctl").orElseThrow(() -> new UnsatisfiedLinkError("libc has no prctl")),
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG),
            Linker.Option.firstVariadicArg(1));

    private static final int PR_SET_TIMERSLACK = 29;
    private static final int PR_GET_TIMERSLACK = 30;
    /** {@code pid_t getpid(void);} */
    private static final MethodHandle GETPID = bind("getpid", FunctionDescriptor.of(ValueLayout.JAVA_INT));
    /** {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);} sets errno */
    private static final MethodHandle MMAP = bindErrno(
            "mmap",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG));
    /** {@code int munmap(void *addr, size_t length);} sets errno */
    private static final MethodHandle MUNMAP = bindErrno(
            "munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
    /** {@code int madvise(void *addr, size_t length, int advice);} sets errno */
    private static final MethodHandle MADVISE = bindErrno(
            "madvise",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;

    /** {@code MADV_HUGEPAGE}: back the range with transparent huge pages where the kernel's setting allows. */
    public static final int MADV_HUGEPAGE = 14;

    /** {@code MADV_POPULATE_WRITE} (Linux 5.14): fault the range in, writable, now; EINVAL on older kernels. */
    public static final int MADV_POPULATE_WRITE = 23;

    /** {@code EINVAL}: what {@code madvise} returns for advice the kernel does not know. */
    public static final int EINVAL = 22;

    /** {@code EINTR}: a signal interrupted the call. */
    public static final int EINTR = 4;

    /** {@code ENOMEM}: out of memory, or (for {@code madvise}) a range that is not mapped. */
    public static final int ENOMEM = 12;

    /** {@code EFAULT}: {@code MADV_POPULATE_WRITE} could not fault a page in. */
    public static final int EFAULT = 14;

    /**
     * {@code sizeof(struct sigaction)} on LP64 glibc (x86_64 and aarch64): handler 8, sa_mask 128, sa_flags 4 + 4
     * padding, sa_restorer 8. The handler (a union of sa_handler and sa_sigaction) is at offset 0, sa_flags at 136.
     */
    public static final long SIGACTION_SIZE = 152;

    public static final long SIGACTION_FLAGS_OFFSET = 136;

    private Libc() {}

    /** A downcall to libc's {@code name}. */
    static MethodHandle bind(String name, FunctionDescriptor fd) {
        MemorySegment addr = LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(addr, fd);
    }

    private static MethodHandle bindErrno(String name, FunctionDescriptor fd) {
        MemorySegment addr = LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(addr, fd, Errno.OPTION);
    }

    /** Sets a variable in the process environment (not only Java's view of it), so native libraries read it. */
    public static void setenv(String name, String value, boolean overwrite) {
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) SETENV.invokeExact(a.allocateFrom(name), a.allocateFrom(value), overwrite ? 1 : 0);
            if (rc != 0) {
                throw new IllegalStateException("setenv(" + name + ") failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Reads the process environment as native code sees it (Java's System.getenv is a snapshot taken at start). */
    public static String getenv(String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = (MemorySegment) GETENV.invokeExact(a.allocateFrom(name));
            return Structs.string(p);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Reads the current disposition of {@code signal} into {@code out} ({@link #SIGACTION_SIZE} bytes). */
    public static void sigactionGet(int signal, MemorySegment out) {
        sigaction(signal, MemorySegment.NULL, out);
    }

    /** Installs the disposition held in {@code act} for {@code signal}. */
    public static void sigactionSet(int signal, MemorySegment act) {
        sigaction(signal, act, MemorySegment.NULL);
    }

    private static void sigaction(int signal, MemorySegment act, MemorySegment old) {
        try {
            int rc = (int) SIGACTION.invokeExact(signal, act, old);
            if (rc != 0) {
                throw new IllegalStateException("sigaction(" + signal + ") failed");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** The address of the handler installed for {@code signal}, or 0 (SIG_DFL) or 1 (SIG_IGN). */
    public static long signalHandler(int signal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(SIGACTION_SIZE, 8);
            sigactionGet(signal, s);
            return s.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    /**
     * Sets the calling thread's timer slack (Linux {@code PR_SET_TIMERSLACK}): how late the kernel may wake a timed
     * sleep so it can batch wake-ups. A thread starts with its creator's, 50 us by default, which turns every
     * {@code parkNanos} of a few microseconds into one of 50 or more.
     *
     * @param nanos the slack, at least 1 (0 would mean "back to the default")
     */
    public static void setTimerSlack(long nanos) {
        if (nanos < 1) {
            throw new IllegalArgumentException("timer slack must be at least 1 ns, got " + nanos);
        }
        int rc = prctl(PR_SET_TIMERSLACK, nanos);
        if (rc != 0) {
            throw new IllegalStateException("prctl(PR_SET_TIMERSLACK, " + nanos + ") failed");
        }
    }

    /** The calling thread's timer slack in nanoseconds (Linux {@code PR_GET_TIMERSLACK}). */
    public static long timerSlack() {
        int rc = prctl(PR_GET_TIMERSLACK, 0);
        if (rc < 0) {
            throw new IllegalStateException("prctl(PR_GET_TIMERSLACK) failed");
        }
        return rc;
    }

    private static int prctl(int option, long arg) {
        try {
            return (int) PRCTL.invokeExact(option, arg, 0L, 0L, 0L);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** libc's text for an errno value; unknown values read "Unknown error N". */
    public static String strerror(int errno) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256);
            int rc = (int) STRERROR_R.invokeExact(errno, buf, 256L);
            return rc == 0 ? buf.getString(0) : "Unknown error " + errno;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    public static int getpid() {
        try {
            return (int) GETPID.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * A private anonymous mapping of {@code length} bytes, readable and writable, zero until written.
     *
     * @return its address
     * @throws NativeCallException naming {@code mmap}, the length and errno when the kernel refuses it
     */
    public static long mmapAnonymous(long length) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = Errno.newCapture(a);
            long address = (long) MMAP.invokeExact(capture, 0L, length, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (address == -1L) {
                int errno = Errno.read(capture);
                throw new NativeCallException(
                        "mmap",
                        "length=" + length + ", PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS",
                        errno,
                        strerror(errno),
                        "the process is out of address space or memory: allocate less, or raise ulimit -v");
            }
            return address;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * Unmaps {@code [address, address + length)}.
     *
     * @throws NativeCallException naming {@code munmap} and errno (EINVAL: not page-aligned)
     */
    public static void munmap(long address, long length) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = Errno.newCapture(a);
            int rc = (int) MUNMAP.invokeExact(capture, address, length);
            if (rc != 0) {
                int errno = Errno.read(capture);
                throw new NativeCallException(
                        "munmap",
                        "addr=0x" + Long.toHexString(address) + ", length=" + length,
                        errno,
                        strerror(errno),
                        null);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code madvise(address, length, advice)}.
     *
     * @return 0, or the errno it failed with: the caller decides which failures matter (EINVAL for advice an older
     *     kernel does not know)
     */
    public static int madvise(long address, long length, int advice) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment capture = Errno.newCapture(a);
            int rc = (int) MADVISE.invokeExact(capture, address, length, advice);
            return rc == 0 ? 0 : Errno.read(capture);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
