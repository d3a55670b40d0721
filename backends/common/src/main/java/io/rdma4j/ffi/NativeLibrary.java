package io.rdma4j.ffi;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.Rdma4jException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A shared library loaded by explicit soname. Loading is a probe: it never throws; {@link #isAvailable()} and
 * {@link #unavailabilityCause()} say how it went, and {@link #ensureAvailable()} turns an absent library into one clear
 * error that names what to install. Functions bind lazily ({@link #function}): a missing symbol fails when first
 * called, naming the function and the library.
 *
 * <p>Before the library loads, the environment variables given to {@link Builder#environment} are set in the process
 * environment through libc {@code setenv} (unless already set), and the load runs inside {@link SignalGuard}.
 */
public final class NativeLibrary {
    private static final Linker LINKER = Linker.nativeLinker();

    private final String name;
    private final String installHint;
    private final String soname;
    private final SymbolLookup lookup;
    private final Throwable cause;

    private NativeLibrary(String name, String installHint, String soname, SymbolLookup lookup, Throwable cause) {
        this.name = name;
        this.installHint = installHint;
        this.soname = soname;
        this.lookup = lookup;
        this.cause = cause;
    }

    /** @param name the library's common name for messages, e.g. {@code libfabric} */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    public static final class Builder {
        private final String name;
        private List<String> sonames = List.of();
        private String installHint = "";
        private final Map<String, String> environment = new LinkedHashMap<>();

        private Builder(String name) {
            this.name = name;
        }

        /** Sonames to try in order, e.g. {@code libfabric.so.1}. */
        public Builder sonames(String... sonames) {
            this.sonames = List.of(sonames);
            return this;
        }

        /** What a user runs to get the library, e.g. {@code apt-get install libfabric1}. */
        public Builder installHint(String hint) {
            this.installHint = hint;
            return this;
        }

        /** A variable set in the process environment before loading, unless the user already set it. */
        public Builder environment(String variable, String value) {
            environment.put(variable, value);
            return this;
        }

        /** Loads the library; never throws. */
        public NativeLibrary load() {
            try {
                environment.forEach((k, v) -> Libc.setenv(k, v, false));
            } catch (Throwable t) {
                return new NativeLibrary(name, installHint, null, null, t);
            }
            Throwable last = null;
            for (String soname : sonames) {
                try {
                    SymbolLookup lookup = SignalGuard.around(
                            "loading " + soname, () -> SymbolLookup.libraryLookup(soname, Arena.global()));
                    return new NativeLibrary(name, installHint, soname, lookup, null);
                } catch (IllegalCallerException e) {
                    return new NativeLibrary(
                            name,
                            installHint,
                            null,
                            null,
                            new IllegalCallerException(
                                    "native access is not enabled: run java with --enable-native-access=ALL-UNNAMED",
                                    e));
                } catch (Throwable t) {
                    last = t;
                }
            }
            if (last == null) {
                last = new IllegalArgumentException("no soname given for " + name);
            }
            return new NativeLibrary(name, installHint, null, null, last);
        }
    }

    public String name() {
        return name;
    }

    /** @return the soname that loaded, or null */
    public String soname() {
        return soname;
    }

    public boolean isAvailable() {
        return lookup != null;
    }

    /** @return why the library is not available, or null when it is */
    public Throwable unavailabilityCause() {
        return cause;
    }

    /** Throws one clear error, naming what to install, if the library is not available. */
    public void ensureAvailable() {
        if (lookup == null) {
            throw new BackendUnavailableException(
                    name + " is not available: " + (cause == null ? "not loaded" : cause.getMessage())
                            + (installHint.isEmpty() ? "" : ". Install it: " + installHint),
                    cause);
        }
    }

    /** The address of {@code symbol}, if this library is loaded and exports it. */
    public Optional<MemorySegment> find(String symbol) {
        return lookup == null ? Optional.empty() : lookup.find(symbol);
    }

    /** A function of this library, bound on first call. */
    public NativeFunction function(String cName, FunctionDescriptor descriptor, Linker.Option... options) {
        return new NativeFunction(this, cName, descriptor, options);
    }

    MethodHandle bind(String cName, FunctionDescriptor descriptor, Linker.Option... options) {
        ensureAvailable();
        MemorySegment address = lookup.find(cName)
                .orElseThrow(() -> new Rdma4jException(cName + " is not exported by " + soname + " (" + name
                        + "): the installed version is too old for this binding"
                        + (installHint.isEmpty() ? "" : "; install a newer one: " + installHint)));
        return LINKER.downcallHandle(address, descriptor, options);
    }

    @Override
    public String toString() {
        return name
                + (isAvailable()
                        ? " (" + soname + ")"
                        : " (unavailable: " + (cause == null ? "?" : cause.getMessage()) + ")");
    }
}
