package io.rdma4j.ibverbs;

import io.rdma4j.Closeables;
import io.rdma4j.ClosedException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * An owned native handle. {@link #close()} is idempotent, closes dependents first (objects that reference this one: a
 * queue pair depends on its protection domain and its completion queues), then destroys the handle, and collects
 * failures as suppressed exceptions.
 */
abstract class NativeObject implements AutoCloseable {
    final String what;
    final MemorySegment handle;
    private final List<NativeObject> dependencies = new ArrayList<>();
    private final Set<NativeObject> dependents = new LinkedHashSet<>();
    private volatile boolean closed;

    NativeObject(String what, MemorySegment handle, NativeObject... dependsOn) {
        this.what = what;
        this.handle = handle;
        for (NativeObject d : dependsOn) {
            if (d != null) {
                d.ensureOpen();
                synchronized (d.dependents) {
                    d.dependents.add(this);
                }
                dependencies.add(d);
            }
        }
    }

    final void ensureOpen() {
        if (closed) {
            throw new ClosedException(what);
        }
    }

    /** @return true once {@link #close()} has run */
    public final boolean isClosed() {
        return closed;
    }

    /** The native address of the C object, for diagnostics and for passing to other bindings. */
    public final MemorySegment handle() {
        ensureOpen();
        return handle;
    }

    @Override
    public final void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<NativeObject> kids;
        synchronized (dependents) {
            kids = new ArrayList<>(dependents);
            dependents.clear();
        }
        List<AutoCloseable> all = new ArrayList<>(kids.reversed()); // the newest dependent first
        all.add(this::destroy);
        try {
            Closeables.closeAll(all);
        } finally {
            for (NativeObject d : dependencies) {
                synchronized (d.dependents) {
                    d.dependents.remove(this);
                }
            }
        }
    }

    /** Releases the native object; called once. */
    abstract void destroy();

    @Override
    public String toString() {
        return what + (closed ? " (closed)" : "");
    }
}
