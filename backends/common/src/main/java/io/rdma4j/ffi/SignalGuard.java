package io.rdma4j.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Keeps the JVM's signal handlers in place across native code that may replace them. HotSpot relies on its own
 * SIGSEGV/SIGBUS/SIGFPE/SIGILL handlers for implicit null checks and safepoints; a library constructor that installs
 * its own (Debian's libinfinipath, loaded by libfabric's psm provider, does) makes the JVM crash at random later. The
 * guard snapshots every disposition the JVM owns, runs the action (typically a dlopen), and puts back any that changed,
 * recording which ones so the info command can report it.
 */
public final class SignalGuard {
    /** SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGBUS, SIGFPE, SIGSEGV, SIGUSR2, SIGPIPE, SIGTERM, SIGXFSZ (Linux numbers). */
    static final int[] GUARDED = {1, 2, 3, 4, 7, 8, 11, 12, 13, 15, 25};

    private static final List<String> RESTORED = new ArrayList<>();

    private SignalGuard() {}

    /** Runs {@code action}; any guarded signal disposition it changed is restored before this returns or throws. */
    public static <T> T around(String what, Supplier<T> action) {
        synchronized (SignalGuard.class) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment saved = arena.allocate(Libc.SIGACTION_SIZE * GUARDED.length, 8);
                for (int i = 0; i < GUARDED.length; i++) {
                    Libc.sigactionGet(GUARDED[i], saved.asSlice(i * Libc.SIGACTION_SIZE, Libc.SIGACTION_SIZE));
                }
                try {
                    return action.get();
                } finally {
                    MemorySegment now = arena.allocate(Libc.SIGACTION_SIZE, 8);
                    for (int i = 0; i < GUARDED.length; i++) {
                        MemorySegment before = saved.asSlice(i * Libc.SIGACTION_SIZE, Libc.SIGACTION_SIZE);
                        Libc.sigactionGet(GUARDED[i], now);
                        if (changed(before, now)) {
                            Libc.sigactionSet(GUARDED[i], before);
                            RESTORED.add(what + " replaced the handler of signal " + GUARDED[i]
                                    + "; the JVM's was put back");
                        }
                    }
                }
            }
        }
    }

    private static boolean changed(MemorySegment before, MemorySegment now) {
        return before.get(ValueLayout.JAVA_LONG, 0) != now.get(ValueLayout.JAVA_LONG, 0)
                || before.get(ValueLayout.JAVA_INT, Libc.SIGACTION_FLAGS_OFFSET)
                        != now.get(ValueLayout.JAVA_INT, Libc.SIGACTION_FLAGS_OFFSET);
    }

    /** What the guard had to put back so far in this process, for diagnostics. */
    public static synchronized List<String> restored() {
        return List.copyOf(RESTORED);
    }
}
