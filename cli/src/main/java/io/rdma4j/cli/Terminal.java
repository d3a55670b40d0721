package io.rdma4j.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * Whether standard error is a terminal, and how wide. {@code System.console()} cannot say: it looks at standard input
 * and output, and progress goes to standard error so that standard output stays parseable. jline could, but only
 * through its JNI library; two libc calls through FFM do it without one.
 */
final class Terminal {
    private static final int STDERR = 2;
    /** {@code TIOCGWINSZ} from {@code <asm-generic/ioctls.h>}: the same on x86_64 and aarch64. */
    private static final long TIOCGWINSZ = 0x5413;

    private static final Linker LINKER = Linker.nativeLinker();
    /** {@code int isatty(int fd);} */
    private static final Optional<MethodHandle> ISATTY =
            bind("isatty", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    /** {@code int ioctl(int fd, unsigned long request, ...);} called with a {@code struct winsize *}. */
    private static final Optional<MethodHandle> IOCTL = bind(
            "ioctl",
            FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
            Linker.Option.firstVariadicArg(2));

    private Terminal() {}

    private static Optional<MethodHandle> bind(String name, FunctionDescriptor fd, Linker.Option... options) {
        return LINKER.defaultLookup().find(name).map(a -> LINKER.downcallHandle(a, fd, options));
    }

    /**
     * @return true when standard error is a terminal that can redraw a line: not redirected, and {@code TERM} is not
     *     {@code dumb} (Emacs shells, some CI logs)
     */
    static boolean stderrIsTerminal() {
        if ("dumb".equals(System.getenv("TERM")) || ISATTY.isEmpty()) {
            return false;
        }
        try {
            return (int) ISATTY.get().invokeExact(STDERR) == 1;
        } catch (Throwable t) {
            return false; // no native access (--enable-native-access missing): plain lines are always safe
        }
    }

    /** @return the columns of the terminal on standard error, or {@code fallback} when it does not say */
    static int columns(int fallback) {
        if (IOCTL.isPresent()) {
            // struct winsize { unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel; }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment ws = a.allocate(8, 2);
                int rc = (int) IOCTL.get().invokeExact(STDERR, TIOCGWINSZ, ws);
                int cols = Short.toUnsignedInt(ws.get(ValueLayout.JAVA_SHORT, 2));
                if (rc == 0 && cols > 0) {
                    return cols;
                }
            } catch (Throwable t) {
                // fall through to COLUMNS
            }
        }
        try {
            return Integer.parseInt(System.getenv().getOrDefault("COLUMNS", ""));
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
