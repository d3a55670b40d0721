package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FID_OPS;
import static io.rdma4j.libfabric.ffi.FabricH.OPS_CLOSE;

import io.rdma4j.Closeables;
import io.rdma4j.ClosedException;
import io.rdma4j.ffi.SignalGuard;
import io.rdma4j.libfabric.ffi.Fi;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * An open libfabric object ({@code struct fid}) owned by a Java object. {@link #close()} is idempotent, closes the
 * children first (endpoints before the regions, queues and address vectors they use), then calls {@code fi_close}, and
 * collects every failure as suppressed exceptions of the first.
 */
abstract class FabricResource implements AutoCloseable {
    private final String what;
    private final FabricResource parent;
    private final List<FabricResource> children = new ArrayList<>();
    /** The {@code struct fid *}; 0 once closed. Volatile so a data-path check sees a close made by another thread. */
    private volatile long fid;

    FabricResource(String what, FabricResource parent) {
        this.what = what;
        this.parent = parent;
    }

    /** Called by the subclass constructor once the native object exists. */
    final void opened(long fid) {
        this.fid = fid;
        if (parent != null) {
            parent.adopt(this);
        }
    }

    /** @return the native {@code struct fid *}; throws {@link ClosedException} once closed */
    final long fid() {
        long f = fid;
        if (f == 0) {
            throw new ClosedException(what);
        }
        return f;
    }

    public final boolean isOpen() {
        return fid != 0;
    }

    final String what() {
        return what;
    }

    private synchronized void adopt(FabricResource child) {
        if (fid == 0) {
            throw new ClosedException(what);
        }
        children.add(child);
    }

    private synchronized void release(FabricResource child) {
        children.remove(child);
    }

    /** Lower closes first among siblings. */
    int closeRank() {
        return 10;
    }

    /** Fails before any native call when closing now would leave something dangling; by default nothing. */
    void checkCanClose() {}

    /** Runs after {@code fi_close} succeeded. */
    void afterClose() {}

    @Override
    public final void close() {
        List<FabricResource> kids;
        synchronized (this) {
            if (fid == 0) {
                return;
            }
            checkCanClose();
            kids = new ArrayList<>(children);
        }
        kids.sort(Comparator.comparingInt(FabricResource::closeRank));
        List<AutoCloseable> all = new ArrayList<>(kids);
        all.add(this::closeFid);
        // a child that failed to close is the cause of the EBUSY fi_close then returns: it is the one thrown
        Closeables.closeAll(all);
    }

    private void closeFid() {
        synchronized (this) {
            long f = fid;
            if (f != 0) {
                int rc = fiClose(f);
                if (rc != 0) {
                    throw FabricException.of(
                            "fi_close",
                            what,
                            rc,
                            "close what uses this " + what
                                    + " first (endpoints before queues, address vectors and domains)");
                }
                fid = 0;
                afterClose();
            }
        }
        if (parent != null) {
            parent.release(this);
        }
    }

    /** {@code static inline int fi_close(struct fid *fid) { return fid->ops->close(fid); }} */
    static int fiClose(long fid) {
        MemorySegment fn = Fi.op(fid + FID_OPS, OPS_CLOSE, "fi_close");
        try {
            return (int) Fi.CLOSE.invokeExact(fn, fid);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** A native control call that returns an int status. */
    @FunctionalInterface
    interface NativeCall {
        int call() throws Throwable;
    }

    /**
     * Runs a control-path call inside {@link SignalGuard}: providers install signal handlers when their objects are
     * first created (the shm provider puts its own SIGSEGV/SIGBUS handlers in place with its first endpoint), which
     * would take the JVM's away. Never used on the data path.
     */
    static int guarded(String what, NativeCall call) {
        return SignalGuard.around(what, () -> {
            try {
                return call.call();
            } catch (Throwable t) {
                throw rethrow(t);
            }
        });
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
