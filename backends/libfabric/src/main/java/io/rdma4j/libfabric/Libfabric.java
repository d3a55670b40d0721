package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FI_SOURCE;
import static io.rdma4j.libfabric.ffi.FabricH.FI_VERSION_1_17;

import io.rdma4j.ffi.SignalGuard;
import io.rdma4j.libfabric.ffi.Fi;
import io.rdma4j.libfabric.ffi.FiErrnoH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Entry point: availability of {@code libfabric.so.1}, its version, and {@link #getinfo(Hints)}.
 *
 * <p>Progress: the providers used here (shm, tcp;ofi_rxm, and efa, verbs;ofi_rxm on hardware) report manual data
 * progress. A send-side completion means the local buffer may be reused, not that the bytes are visible at the target;
 * and the target only moves data while it polls its completion queue. Where visibility matters, write the last chunk
 * with {@link Endpoint#writeData} and let the target wait for the remote CQ data completion; keep polling the target's
 * queue while transfers are in flight.
 */
public final class Libfabric {
    private Libfabric() {}

    /** @return true when {@code libfabric.so.1} loaded; never throws */
    public static boolean isAvailable() {
        return Fi.LIB.isAvailable();
    }

    /** @return why libfabric is not available, or null */
    public static Throwable unavailabilityCause() {
        return Fi.LIB.unavailabilityCause();
    }

    /** Throws one clear error, naming the package to install, when libfabric is not available. */
    public static void ensureAvailable() {
        Fi.LIB.ensureAvailable();
    }

    /** @return {@code fi_version()}: {@code (major << 16) | minor} */
    public static int version() {
        ensureAvailable();
        return Fi.version();
    }

    /** @return the runtime version as {@code major.minor} */
    public static String versionString() {
        int v = version();
        return (v >>> 16) + "." + (v & 0xffff);
    }

    /** The API version requested from fi_getinfo: 1.17, or the runtime's version when it is older. */
    public static int apiVersion() {
        return Integer.compareUnsigned(version(), FI_VERSION_1_17) < 0 ? version() : FI_VERSION_1_17;
    }

    /** {@code fi_strerror} for a status a data-path call returned (a negative {@code -FI_*}), or "success". */
    public static String statusText(long status) {
        if (status >= 0) {
            return "success";
        }
        return status == Endpoint.BACK_PRESSURED
                ? "back-pressured (FI_EAGAIN): poll the completion queue and retry"
                : FabricException.text((int) -status);
    }

    /**
     * {@code fi_getinfo} with these hints: every matching provider, fabric and domain, in libfabric's order of
     * preference. Runs inside {@link SignalGuard} because providers are loaded (dlopen) during the call. An empty list
     * means nothing matched.
     */
    public static InfoList getinfo(Hints hints) {
        ensureAvailable();
        int version = hints.version() != 0 ? hints.version() : apiVersion();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = hints.toNative(arena);
            MemorySegment node = hints.node() == null ? MemorySegment.NULL : arena.allocateFrom(hints.node());
            MemorySegment service = hints.service() == null ? MemorySegment.NULL : arena.allocateFrom(hints.service());
            long flags = hints.node() != null && hints.source() ? FI_SOURCE : 0;
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = SignalGuard.around("fi_getinfo", () -> {
                try {
                    return (int) Fi.FI_GETINFO.handle().invokeExact(version, node, service, flags, h, out);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable t) {
                    throw new AssertionError(t);
                }
            });
            if (rc == -FiErrnoH.FI_ENODATA) {
                return new InfoList(0, hints);
            }
            if (rc != 0) {
                throw FabricException.of(
                        "fi_getinfo",
                        hints.toString(),
                        rc,
                        "check the hints; Libfabric.getinfo(Hints.none()) lists what this machine offers");
            }
            return new InfoList(out.get(ValueLayout.JAVA_LONG, 0), hints);
        }
    }
}
