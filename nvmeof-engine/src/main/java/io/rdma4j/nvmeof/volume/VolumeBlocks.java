package io.rdma4j.nvmeof.volume;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.nvmeof.Checkpoint;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A checkpoint's blocks on an engine volume: every write and read is one engine transfer, striped over the volume's
 * namespaces through the NIC the engine chose. Native segments go as they are (registered, never copied); heap ones
 * (the manifest, a tensor's last partial block) through a native copy owned by {@code arena}.
 *
 * <pre>{@code
 * try (StorageVolume volume = engine.openVolume(spec); Arena arena = Arena.ofShared()) {
 *     Checkpoint.write(new VolumeBlocks(engine, volume, arena), 0, tensors);
 * }
 * }</pre>
 *
 * @param arena owns the native copies of heap segments; close it after the checkpoint
 */
public record VolumeBlocks(TransferEngine engine, StorageVolume volume, Arena arena) implements Checkpoint.Blocks {
    public VolumeBlocks {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(volume, "volume");
        Objects.requireNonNull(arena, "arena");
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
        MemorySegment src =
                data.isNative() ? data : arena.allocate(data.byteSize(), 4096).copyFrom(data);
        return io(true, lba, src, null);
    }

    @Override
    public CompletableFuture<Void> read(long lba, MemorySegment into) {
        return into.isNative()
                ? io(false, lba, into, null)
                : io(false, lba, arena.allocate(into.byteSize(), 4096), into);
    }

    private CompletableFuture<Void> io(boolean write, long lba, MemorySegment memory, MemorySegment copyBack) {
        LocalBuffer b = engine.register(memory);
        try {
            VolumeExtent extent = volume.extent(lba, memory.byteSize());
            Transfer t = write
                    ? engine.write(b, 0, extent, 0, memory.byteSize(), TransferOptions.DEFAULT)
                    : engine.read(b, 0, extent, 0, memory.byteSize(), TransferOptions.DEFAULT);
            return t.future().whenComplete((r, e) -> b.close()).thenApply(r -> {
                if (copyBack != null) {
                    copyBack.copyFrom(memory);
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
