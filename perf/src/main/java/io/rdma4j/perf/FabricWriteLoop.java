package io.rdma4j.perf;

import io.rdma4j.Closeables;
import io.rdma4j.libfabric.AddressVector;
import io.rdma4j.libfabric.CompletionQueue;
import io.rdma4j.libfabric.Completions;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.Endpoint;
import io.rdma4j.libfabric.Fabric;
import io.rdma4j.libfabric.Hints;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.libfabric.MemoryRegion;
import io.rdma4j.libfabric.RemoteRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The raw libfabric write baseline: windowed {@code fi_write}s from one endpoint to another in this process, each with
 * its own fabric and domain, over a given provider. Layers above (the transfer engine) are measured against the numbers
 * this loop produces; they can reuse {@link Pair} and {@link #measure}.
 *
 * <p>One thread posts, reaps the initiator's completions and progresses the target ({@link Pair#progressTarget()}), as
 * a C loop over the same calls would: with manual progress (tcp) the target only moves data while it polls, and on a
 * small machine a second spinning thread would compete with the first. The measured time runs from the first post until
 * every write has completed at the initiator and a final writedata has arrived at the target, so the numbers mean bytes
 * visible there.
 */
public final class FabricWriteLoop {
    private FabricWriteLoop() {}

    /**
     * One measurement.
     *
     * @param provider libfabric provider that ran it
     * @param size bytes per write
     * @param window writes kept in flight
     * @param ops writes completed
     * @param seconds elapsed time
     */
    public record Result(String provider, long size, int window, long ops, double seconds) {
        public double gigabytesPerSecond() {
            return ops * (double) size / seconds / 1e9;
        }

        public double messagesPerSecond() {
            return ops / seconds;
        }
    }

    /** Hints for a benchmark provider; tcp is kept on loopback. */
    public static Hints hints(String provider) {
        Hints h = Hints.rdm().provider(provider);
        return provider.startsWith("tcp") ? h.sourceAddress("127.0.0.1") : h;
    }

    /** An initiator and a target endpoint with registered buffers of {@code bufferSize} bytes each. */
    public static final class Pair implements AutoCloseable {
        private final Arena arena = Arena.ofShared();
        private final Fabric initiatorFabric;
        private final Fabric targetFabric;
        final Endpoint initiator;
        final CompletionQueue initiatorCq;
        final MemoryRegion source;
        final RemoteRegion target;
        final long peer;
        final String provider;
        private final CompletionQueue targetCq;
        private final Completions targetCompletions;
        private long remoteData = -1;

        public Pair(String provider, long bufferSize) {
            Libfabric.ensureAvailable();
            try (InfoList infos = Libfabric.getinfo(hints(provider))) {
                this.provider = infos.first().provider();
                initiatorFabric = Fabric.open(infos.first());
                targetFabric = Fabric.open(infos.first());
            }
            Domain d = initiatorFabric.openDomain();
            initiatorCq = d.openCompletionQueue(1024);
            AddressVector av = d.openAddressVector(2);
            initiator = d.openEndpoint(initiatorCq, av);
            source = d.register(arena.allocate(bufferSize, 4096));
            Domain td = targetFabric.openDomain();
            CompletionQueue tcq = td.openCompletionQueue(1024);
            AddressVector tav = td.openAddressVector(2);
            Endpoint t = td.openEndpoint(tcq, tav);
            MemoryRegion region = td.register(arena.allocate(bufferSize, 4096));
            target = region.remote();
            peer = av.insert(t.name());
            tav.insert(initiator.name());
            targetCq = tcq;
            targetCompletions = new Completions(64);
        }

        /** Polls the target's queue once: with manual progress (tcp) the target moves data only while it polls. */
        public void progressTarget() {
            int n = targetCq.read(targetCompletions);
            for (int i = 0; i < n; i++) {
                if (targetCompletions.hasRemoteData(i)) {
                    remoteData = targetCompletions.data(i);
                }
            }
        }

        /** @return the provider that matched, e.g. {@code tcp;ofi_rxm} */
        public String provider() {
            return provider;
        }

        long remoteData() {
            return remoteData;
        }

        @Override
        public void close() {
            Closeables.closeAll(initiatorFabric, targetFabric, targetCompletions, arena);
        }
    }

    /**
     * Writes of {@code size} bytes, {@code window} in flight, for at least {@code minOps} writes and
     * {@code budgetNanos} nanoseconds, then a writedata whose arrival at the target ends the measurement.
     */
    public static Result measure(Pair pair, long size, int window, long minOps, long budgetNanos) {
        return measure(pair, size, window, window, minOps, budgetNanos);
    }

    /**
     * As {@link #measure(Pair, long, int, long, long)}, with the writes cycling through at most {@code regions}
     * distinct source and destination regions of {@code size}: 1 is fabtests' pattern (every write from the same buffer
     * to the same remote address, which stays in cache up to a few MiB), {@code window} gives every write in flight its
     * own memory.
     */
    public static Result measure(Pair pair, long size, int window, int regions, long minOps, long budgetNanos) {
        long region = pair.source.byteSize();
        if (size <= 0 || size > region) {
            throw new IllegalArgumentException("size " + size + " must be in (0, " + region + "]");
        }
        if (regions < 1) {
            throw new IllegalArgumentException("regions must be at least 1, got " + regions);
        }
        long slots = Math.max(1, Math.min(regions, region / size));
        long posted = 0;
        long completed = 0;
        long marker = System.nanoTime();
        try (Completions c = new Completions(64)) {
            long t0 = System.nanoTime();
            long end = t0 + budgetNanos;
            while (posted < minOps || System.nanoTime() < end) {
                if (posted - completed < window) {
                    long off = (posted % slots) * size;
                    long rc = pair.initiator.write(pair.source, off, size, pair.peer, pair.target, off, posted);
                    if (rc == Endpoint.OK) {
                        posted++;
                        continue;
                    }
                    if (rc != Endpoint.BACK_PRESSURED) {
                        throw new IllegalStateException("fi_write failed: " + Libfabric.statusText(rc));
                    }
                }
                completed += pair.initiatorCq.read(c);
                pair.progressTarget();
            }
            while (completed < posted) {
                completed += pair.initiatorCq.read(c);
                pair.progressTarget();
            }
            long rc;
            while ((rc = pair.initiator.writeData(
                            pair.source, 0, Math.min(size, 8), marker, pair.peer, pair.target, 0, -1))
                    == Endpoint.BACK_PRESSURED) {
                pair.initiatorCq.read(c);
                pair.progressTarget();
            }
            if (rc != Endpoint.OK) {
                throw new IllegalStateException("fi_writedata failed: " + Libfabric.statusText(rc));
            }
            long deadline = System.nanoTime() + 30_000_000_000L;
            boolean markerDone = false;
            while (pair.remoteData() != marker || !markerDone) {
                if (pair.initiatorCq.read(c) > 0) {
                    markerDone = true;
                }
                pair.progressTarget();
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the final writedata did not arrive within 30 s");
                }
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new Result(pair.provider(), size, window, completed, seconds);
        }
    }

    /** memcpy of {@code size} bytes between two native segments, the ceiling any shared-memory transport can reach. */
    public static double memcpyGigabytesPerSecond(MemorySegment from, MemorySegment to, long size, long budgetNanos) {
        long ops = 0;
        long t0 = System.nanoTime();
        long end = t0 + budgetNanos;
        long batch = Math.max(1, (1 << 20) / size); // read the clock once per ~1 MiB copied, not per tiny copy
        do {
            for (long i = 0; i < batch; i++) {
                MemorySegment.copy(from, 0, to, 0, size);
            }
            ops += batch;
        } while (System.nanoTime() < end);
        return ops * (double) size / ((System.nanoTime() - t0) / 1e9) / 1e9;
    }
}
