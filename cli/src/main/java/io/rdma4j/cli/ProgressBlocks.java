package io.rdma4j.cli;

import io.rdma4j.nvmeof.Checkpoint;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Blocks that report their progress: each write and read is split into pieces, all issued at once as before, and each
 * piece counts its bytes when it completes. A whole 1 GiB write is otherwise one future, done or not, with nothing to
 * show in between. Only I/O from block {@code fromLba} on counts: a checkpoint's data, not its manifest.
 *
 * <p>A piece is a 64th of the call, from 64 KiB to 64 MiB (1 GiB goes in 16 MiB pieces): enough steps for a smooth bar,
 * few enough to cost nothing next to the I/O. A controller still splits each piece at its MDTS, as it split the whole;
 * an engine volume registers each piece, which is free when the whole buffer was registered before.
 */
final class ProgressBlocks implements Checkpoint.Blocks {
    private static final long MIN_PIECE = 64 << 10;
    private static final long MAX_PIECE = 64 << 20;

    private final Checkpoint.Blocks blocks;
    private final Progress progress;
    private final long fromLba;

    ProgressBlocks(Checkpoint.Blocks blocks, Progress progress, long fromLba) {
        this.blocks = blocks;
        this.progress = progress;
        this.fromLba = fromLba;
    }

    @Override
    public int blockSize() {
        return blocks.blockSize();
    }

    @Override
    public long blocks() {
        return blocks.blocks();
    }

    @Override
    public CompletableFuture<Void> write(long lba, MemorySegment data) {
        return pieces(true, lba, data);
    }

    @Override
    public CompletableFuture<Void> read(long lba, MemorySegment into) {
        return pieces(false, lba, into);
    }

    @Override
    public CompletableFuture<Void> flush() {
        return blocks.flush();
    }

    private CompletableFuture<Void> pieces(boolean write, long lba, MemorySegment s) {
        if (lba < fromLba || s.byteSize() == 0) {
            return write ? blocks.write(lba, s) : blocks.read(lba, s);
        }
        int bs = blocks.blockSize();
        long len = s.byteSize();
        long piece = Math.max(bs, Math.clamp(len / 64, MIN_PIECE, MAX_PIECE) / bs * bs);
        CompletableFuture<Void> all = new CompletableFuture<>();
        AtomicInteger left = new AtomicInteger((int) ((len + piece - 1) / piece));
        for (long off = 0; off < len; off += piece) {
            long n = Math.min(piece, len - off);
            MemorySegment part = s.asSlice(off, n);
            CompletableFuture<Void> f;
            try {
                f = write ? blocks.write(lba + off / bs, part) : blocks.read(lba + off / bs, part);
            } catch (RuntimeException e) {
                if (off == 0) {
                    throw e; // nothing issued yet: fail as the undivided call would
                }
                all.completeExceptionally(e);
                return all;
            }
            f.whenComplete((v, t) -> {
                if (t != null) {
                    all.completeExceptionally(
                            t instanceof CompletionException && t.getCause() != null ? t.getCause() : t);
                    return;
                }
                progress.add(n);
                if (left.decrementAndGet() == 0) {
                    all.complete(null);
                }
            });
        }
        return all;
    }

    @Override
    public String toString() {
        return blocks.toString();
    }
}
