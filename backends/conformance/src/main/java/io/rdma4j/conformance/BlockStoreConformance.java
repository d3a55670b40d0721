package io.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BlockNamespace;
import io.rdma4j.engine.spi.BlockStore;
import io.rdma4j.engine.spi.BlockStoreProvider;
import io.rdma4j.engine.spi.BlockTarget;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every block-store backend must do, tested through {@link BlockStoreProvider} alone. A backend module's test
 * class extends this one, starts a target and names it; targets that need hardware or a kernel module skip when
 * {@link BlockStoreProvider#isAvailable(String)} is false.
 */
public abstract class BlockStoreConformance {
    private static final long TIMEOUT_SECONDS = 10;

    /** @return the provider under test */
    protected abstract BlockStoreProvider provider();

    /** Starts (or finds) a target with a namespace of at least 1 MiB and returns where it listens. */
    protected abstract BlockTarget startTarget() throws Exception;

    /** Stops what {@link #startTarget} started. */
    protected void stopTarget() throws Exception {}

    /** @return the namespace the tests write to; its contents are overwritten */
    protected long nsid() {
        return 1;
    }

    /** @return provider options for {@link BlockStoreProvider#connect} */
    protected Map<String, String> options() {
        return Map.of();
    }

    protected BlockTarget target;
    protected BlockStore store;
    protected Arena arena;

    @BeforeEach
    void connect() throws Exception {
        target = startTarget();
        assumeTrue(
                provider().isAvailable(target.transport()),
                () -> provider().name() + " cannot use " + target.transport() + " here: "
                        + provider().unavailabilityCause(target.transport()));
        arena = Arena.ofShared();
        store = provider().connect(target, options(), null);
    }

    @AfterEach
    void disconnect() throws Exception {
        if (store != null) {
            store.close();
        }
        if (arena != null) {
            arena.close();
        }
        stopTarget();
    }

    @Test
    void describesItselfAndItsNamespace() {
        assertFalse(store.describe().isBlank());
        assertTrue(store.ioSlots() >= 1, "ioSlots " + store.ioSlots());
        assertTrue(store.maxTransferBytes() >= 4096, "maxTransferBytes " + store.maxTransferBytes());
        BlockNamespace ns = store.namespace(nsid());
        assertEquals(nsid(), ns.nsid());
        assertTrue(ns.blockSize() >= 512 && Integer.bitCount(ns.blockSize()) == 1, "block size " + ns.blockSize());
        assertTrue(ns.capacityBytes() >= 1 << 20, "capacity " + ns.capacityBytes());
        assertFalse(ns.describe().isBlank());
    }

    @Test
    void rejectsAnUnknownNamespaceNamingTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> store.namespace(0xFFFF_FFF0L));
        assertTrue(e.getMessage().contains(Long.toString(nsid())), e.getMessage());
    }

    @Test
    void readsBackWhatItWrote() throws Exception {
        BlockNamespace ns = store.namespace(nsid());
        int block = ns.blockSize();
        MemorySegment data = arena.allocate(64L * block, 4096);
        EngineBackendConformance.fill(data, 17);
        await(ns.write(3L * block, data));
        await(ns.flush());
        MemorySegment back = arena.allocate(64L * block, 4096);
        await(ns.read(3L * block, back));
        assertEquals(-1, EngineBackendConformance.mismatch(data, 0, back, 0, data.byteSize()));
    }

    @Test
    void splitsATransferLargerThanOneCommand() throws Exception {
        BlockNamespace ns = store.namespace(nsid());
        long bytes = Math.min(ns.capacityBytes(), Math.min(store.maxTransferBytes() * 3 + ns.blockSize(), 8L << 20));
        bytes -= bytes % ns.blockSize();
        MemorySegment data = arena.allocate(bytes, 4096);
        EngineBackendConformance.fill(data, 23);
        await(ns.write(0, data));
        MemorySegment back = arena.allocate(bytes, 4096);
        await(ns.read(0, back));
        assertEquals(-1, EngineBackendConformance.mismatch(data, 0, back, 0, bytes));
    }

    @Test
    void completesEveryCommandWhenMoreAreOutstandingThanItHasSlots() throws Exception {
        BlockNamespace ns = store.namespace(nsid());
        int block = ns.blockSize();
        int count = Math.min(4 * store.ioSlots() + 3, (int) (ns.capacityBytes() / block));
        MemorySegment data = arena.allocate((long) count * block, 4096);
        EngineBackendConformance.fill(data, 29);
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            writes.add(ns.write((long) i * block, data.asSlice((long) i * block, block)));
        }
        for (CompletableFuture<Void> f : writes) {
            await(f);
        }
        MemorySegment back = arena.allocate((long) count * block, 4096);
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (int i = count - 1; i >= 0; i--) {
            reads.add(ns.read((long) i * block, back.asSlice((long) i * block, block)));
        }
        for (CompletableFuture<Void> f : reads) {
            await(f);
        }
        assertEquals(-1, EngineBackendConformance.mismatch(data, 0, back, 0, data.byteSize()));
    }

    @Test
    void closeFailsWhatIsOutstandingAndIsIdempotent() throws Exception {
        BlockNamespace ns = store.namespace(nsid());
        int block = ns.blockSize();
        MemorySegment data = arena.allocate(256L * block, 4096);
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            writes.add(ns.write((long) i * block, data.asSlice((long) i * block, block)));
        }
        store.close();
        store.close();
        for (CompletableFuture<Void> f : writes) {
            try {
                f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (ExecutionException expected) {
                // failed by the close: fine, it completed
            } catch (TimeoutException e) {
                throw new AssertionError("a write outstanding at close never completed", e);
            }
        }
        // after close, new commands fail instead of hanging or throwing
        CompletableFuture<Void> late;
        try {
            late = ns.write(0, data.asSlice(0, block));
        } catch (RuntimeException e) {
            return; // refusing on the spot is also a failure the caller sees
        }
        assertThrows(ExecutionException.class, () -> late.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        store = null;
    }

    private static void await(CompletableFuture<?> f) throws Exception {
        f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }
}
