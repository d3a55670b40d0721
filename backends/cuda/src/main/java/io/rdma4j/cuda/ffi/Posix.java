package io.rdma4j.cuda.ffi;

import io.rdma4j.ffi.NativeFunction;
import io.rdma4j.ffi.NativeLibrary;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.ValueLayout;

/**
 * The two libc calls the dma-buf export needs that the shared {@code io.rdma4j.ffi.Libc} does not bind: the host page
 * size the export must be aligned to, and closing the exported file descriptor.
 */
public final class Posix {
    private static final NativeLibrary LIBC =
            NativeLibrary.builder("libc").sonames("libc.so.6").load();
    /** {@code long sysconf(int name);} */
    private static final NativeFunction SYSCONF =
            LIBC.function("sysconf", FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    /** {@code int close(int fd);} */
    private static final NativeFunction CLOSE =
            LIBC.function("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    /** {@code _SC_PAGESIZE} in glibc's {@code <bits/confname.h>}. */
    public static final int _SC_PAGESIZE = 30;

    private Posix() {}

    /** @return the host page size, {@code sysconf(_SC_PAGESIZE)} */
    public static long pageSize() {
        try {
            long size = (long) SYSCONF.handle().invokeExact(_SC_PAGESIZE);
            if (size <= 0) {
                throw new IllegalStateException("sysconf(_SC_PAGESIZE) returned " + size);
            }
            return size;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** @return 0, or -1 when {@code close} failed */
    public static int close(int fd) {
        try {
            return (int) CLOSE.handle().invokeExact(fd);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
