package io.rdma4j.libfabric;

import io.rdma4j.Closeables;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** One side of a transfer in a test: its own fabric, domain, queue, address vector, endpoint and registered buffer. */
final class Peer implements AutoCloseable {
    final Fabric fabric;
    final Domain domain;
    final CompletionQueue cq;
    final AddressVector av;
    final Endpoint ep;
    final Completions completions = new Completions(16);
    final Arena arena = Arena.ofShared();
    final MemorySegment buffer;
    final MemoryRegion mr;
    /** Remote CQ data values seen by {@link #poll()}. */
    final List<Long> remoteData = new ArrayList<>();
    /** Contexts of local completions seen by {@link #poll()}. */
    final List<Long> contexts = new ArrayList<>();

    Peer(Info info, long bufferSize) {
        this(info, bufferSize, false);
    }

    /** @param contextPool run the FI_CONTEXT path (context slots) even if the provider does not need it */
    Peer(Info info, long bufferSize, boolean contextPool) {
        this(info, bufferSize, contextPool, false);
    }

    /** @param waitFd open the completion queue with an fd wait object */
    Peer(Info info, long bufferSize, boolean contextPool, boolean waitFd) {
        fabric = Fabric.open(info);
        domain = fabric.openDomain();
        cq = domain.openCompletionQueue(256, waitFd);
        av = domain.openAddressVector(4);
        ep = domain.openEndpoint(cq, av, contextPool);
        buffer = arena.allocate(bufferSize, 4096);
        mr = domain.register(buffer);
    }

    /** Hints for a provider under test: tcp stays on loopback. */
    static Hints hints(String provider) {
        Hints h = Hints.rdm().provider(provider);
        return provider.startsWith("tcp") ? h.sourceAddress("127.0.0.1") : h;
    }

    int poll() {
        int n = cq.read(completions);
        for (int i = 0; i < n; i++) {
            if (completions.hasRemoteData(i)) {
                remoteData.add(completions.data(i));
            } else {
                contexts.add(completions.context(i));
            }
        }
        return n;
    }

    /** Polls both peers (manual progress needs the target to poll too) until {@code done} or 30 s pass. */
    static void progressUntil(Peer a, Peer b, java.util.function.BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean()) {
            a.poll();
            b.poll();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
        }
    }

    /** Posts until the provider accepts, progressing both sides while it is back-pressured. */
    static void post(Peer a, Peer b, java.util.function.LongSupplier op) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        long rc;
        while ((rc = op.getAsLong()) == Endpoint.BACK_PRESSURED) {
            a.poll();
            b.poll();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still back-pressured after 30 s");
            }
        }
        if (rc != 0) {
            throw new AssertionError("post failed: " + Libfabric.statusText(rc));
        }
    }

    @Override
    public void close() {
        Closeables.closeAll(fabric, completions, arena);
    }
}
