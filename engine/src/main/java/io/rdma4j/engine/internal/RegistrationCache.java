package io.rdma4j.engine.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.rdma4j.ClosedException;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.EngineBackend;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Registrations of one backend (one domain), keyed by address range. A request inside a range already registered reuses
 * it; reference counts keep memory in use registered; idle registrations sit in a Caffeine cache whose eviction (size
 * or idle time) deregisters them.
 */
public final class RegistrationCache implements AutoCloseable {
    /** A registered range with its reference count. */
    public static final class Entry {
        final BackendRegistration registration;
        final MemorySegment segment;
        final long registrationNanos;
        int refs;
        boolean deregistered;
        /** Runs once the registration is closed (frees a staging buffer); null for cached host registrations. */
        Runnable afterDeregister;

        Entry(BackendRegistration registration, MemorySegment segment, long registrationNanos) {
            this.registration = registration;
            this.segment = segment;
            this.registrationNanos = registrationNanos;
        }

        public BackendRegistration registration() {
            return registration;
        }

        public long address() {
            return registration.address();
        }

        public long end() {
            return registration.address() + registration.length();
        }

        public long registrationNanos() {
            return registrationNanos;
        }
    }

    /** What {@link #acquire} returns: the entry and whether it was reused. */
    public record Lease(Entry entry, boolean reused) {}

    private final EngineBackend backend;
    private final ConcurrentSkipListMap<Long, Entry> byStart = new ConcurrentSkipListMap<>();
    private final Cache<Long, Entry> idle;
    private final AtomicLong registrations = new AtomicLong();
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong deregistrations = new AtomicLong();
    private final AtomicLong totalRegistrationNanos = new AtomicLong();
    private boolean closed;

    public RegistrationCache(EngineBackend backend, long maxIdleEntries, Duration idleExpiry) {
        this.backend = backend;
        this.idle = Caffeine.newBuilder()
                .maximumSize(maxIdleEntries)
                .expireAfterAccess(idleExpiry)
                .executor(Runnable::run)
                .removalListener((Long start, Entry e, RemovalCause cause) -> {
                    if (e != null && cause.wasEvicted()) {
                        evict(e);
                    }
                })
                .build();
    }

    /** Registers {@code segment} or reuses a registration that contains it; the caller must {@link #release} once. */
    public synchronized Lease acquire(MemorySegment segment) {
        if (closed) {
            throw new ClosedException("the engine's registration cache", "the engine was closed; build a new one");
        }
        long addr = segment.address();
        long end = addr + segment.byteSize();
        Map.Entry<Long, Entry> floor = byStart.floorEntry(addr);
        // a registration containing the range may start at or before addr; scan back over the few that might overlap
        while (floor != null) {
            Entry e = floor.getValue();
            if (!e.deregistered && e.end() >= end && e.segment.scope().isAlive()) {
                e.refs++;
                idle.invalidate(floor.getKey());
                hits.incrementAndGet();
                return new Lease(e, true);
            }
            floor = byStart.lowerEntry(floor.getKey());
            if (floor != null && floor.getValue().end() <= addr) {
                floor = null;
            }
        }
        long t0 = System.nanoTime();
        BackendRegistration r = backend.register(segment);
        long took = System.nanoTime() - t0;
        Entry e = new Entry(r, segment, took);
        e.refs = 1;
        Entry old = byStart.put(addr, e);
        if (old != null && old.refs == 0) {
            // a smaller registration at the same start is superseded: drop it now
            idle.invalidate(addr);
            deregister(old);
        } else if (old != null) {
            // still in use: keep it reachable under no key; it is deregistered when released
            orphans.add(old);
        }
        registrations.incrementAndGet();
        totalRegistrationNanos.addAndGet(took);
        RegistrationEvent.emit(segment.byteSize(), "host", took);
        return new Lease(e, false);
    }

    private final List<Entry> orphans = new ArrayList<>();

    /**
     * Takes a registration made outside the cache (device memory, a staging buffer) with one reference; it is never
     * reused by {@link #acquire} and is deregistered, then {@code afterDeregister} runs, as soon as its last reference
     * is released (or the cache closes).
     */
    public synchronized Entry adopt(
            BackendRegistration registration, long registrationNanos, Runnable afterDeregister) {
        if (closed) {
            registration.close();
            if (afterDeregister != null) {
                afterDeregister.run();
            }
            throw new ClosedException("the engine's registration cache", "the engine was closed; build a new one");
        }
        Entry e = new Entry(registration, MemorySegment.NULL, registrationNanos);
        e.refs = 1;
        e.afterDeregister = afterDeregister;
        orphans.add(e);
        registrations.incrementAndGet();
        totalRegistrationNanos.addAndGet(registrationNanos);
        RegistrationEvent.emit(registration.length(), "adopted", registrationNanos);
        return e;
    }

    /** Adds a reference to an entry already held (a transfer or a publication using it). */
    public synchronized void retain(Entry e) {
        if (e.refs <= 0 || e.deregistered) {
            throw new ClosedException("the registration of this buffer", "register the memory again");
        }
        e.refs++;
    }

    /** Drops one reference; an unreferenced entry becomes idle and is deregistered when Caffeine evicts it. */
    public synchronized void release(Entry e) {
        if (e.refs <= 0) {
            throw new IllegalStateException("registration released more often than acquired");
        }
        if (--e.refs == 0) {
            if (closed || orphans.remove(e) || !e.segment.scope().isAlive()) {
                byStart.remove(e.address(), e);
                deregister(e);
            } else {
                idle.put(e.address(), e);
            }
        }
    }

    private synchronized void evict(Entry e) {
        if (e.refs == 0 && !e.deregistered) {
            byStart.remove(e.address(), e);
            deregister(e);
        }
    }

    private void deregister(Entry e) {
        if (!e.deregistered) {
            e.deregistered = true;
            deregistrations.incrementAndGet();
            try {
                e.registration.close();
            } finally {
                if (e.afterDeregister != null) {
                    e.afterDeregister.run();
                }
            }
        }
    }

    /** Deregisters idle entries now (the cache's normal eviction, run on demand). */
    public void cleanUp() {
        idle.cleanUp();
    }

    /** Deregisters every idle entry now. */
    public synchronized void evictIdle() {
        for (Entry e : new ArrayList<>(idle.asMap().values())) {
            idle.invalidate(e.address());
            evict(e);
        }
    }

    /** @return registered ranges (in use or idle) */
    public int size() {
        return byStart.size();
    }

    public long registrations() {
        return registrations.get();
    }

    public long hits() {
        return hits.get();
    }

    public long deregistrations() {
        return deregistrations.get();
    }

    public long totalRegistrationNanos() {
        return totalRegistrationNanos.get();
    }

    /** Deregisters everything, in use or not (the engine closes it after draining transfers). */
    @Override
    public synchronized void close() {
        closed = true;
        idle.invalidateAll();
        for (Entry e : byStart.values()) {
            deregister(e);
        }
        for (Entry e : orphans) {
            deregister(e);
        }
        byStart.clear();
        orphans.clear();
    }
}
