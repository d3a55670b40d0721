package io.rdma4j.cli;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.nvmeof.Checkpoint;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * A checkpoint's blocks on an engine volume: every write and read is an engine transfer, striped over the volume's
 * namespaces through the NIC the engine chose. Native segments go as they are (registered, not copied); heap ones (the
 * manifest, a file's last partial block) through a native copy.
 */
final class VolumeBlocks implements Checkpoint.Blocks {
    private final TransferEngine engine;
    private final StorageVolume volume;
    private final Arena arena;

    /** @param arena owns the native copies of heap segments; close it after the checkpoint */
    VolumeBlocks(TransferEngine engine, StorageVolume volume, Arena arena) {
        this.engine = engine;
        this.volume = volume;
        this.arena = arena;
    }

    @Override
    public int blockSize() {
        return volume.blockSize();
    }

    @Override
    public long blocks() {
        return volume.capacityBytes() / volume.blockSize();
    }

    @Override
    public CompletableFuture<Void> write(long lba, MemorySegment data) {
        MemorySegment src = data;
        if (!data.isNative()) {
            src = arena.allocate(data.byteSize(), 4096);
            src.copyFrom(data);
        }
        return transfer(true, lba, src, null);
    }

    @Override
    public CompletableFuture<Void> read(long lba, MemorySegment into) {
        if (into.isNative()) {
            return transfer(false, lba, into, null);
        }
        MemorySegment bounce = arena.allocate(into.byteSize(), 4096);
        return transfer(false, lba, bounce, into);
    }

    private CompletableFuture<Void> transfer(boolean write, long lba, MemorySegment memory, MemorySegment copyBackTo) {
        LocalBuffer b = engine.register(memory);
        try {
            var extent = volume.extent(lba, memory.byteSize());
            var t = write ? engine.write(b, 0, extent, 0, memory.byteSize(), TransferOptions.DEFAULT)
                    : engine.read(b, 0, extent, 0, memory.byteSize(), TransferOptions.DEFAULT);
            return t.future().whenComplete((r, e) -> b.close()).thenApply(r -> {
                if (copyBackTo != null) {
                    copyBackTo.copyFrom(memory);
                }
                return null;
            });
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
    }

    @Override
    public CompletableFuture<Void> flush() {
        return volume.flush();
    }

    @Override
    public String toString() {
        return "volume " + volume.name();
    }
}
