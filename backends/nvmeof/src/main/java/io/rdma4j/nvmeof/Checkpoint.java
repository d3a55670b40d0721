package io.rdma4j.nvmeof;

import io.rdma4j.ffi.Segments;
import io.rdma4j.nvmeof.internal.Le;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SequencedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.zip.CRC32C;

/**
 * Named buffers (tensors, files) checkpointed to an extent of a remote namespace, with a manifest of names, offsets,
 * lengths and CRC32Cs. The manifest is written last, after the data is flushed, and the old one is invalidated first:
 * an interrupted checkpoint leaves no valid manifest, so it is never taken for a complete one.
 *
 * <pre>
 * LBA lba:                  manifest area, 64 KiB: "R4JCKPT1", version, count, data bytes, entries, CRC32C of it all
 * LBA lba + 64 KiB / bs:    the buffers, each starting on a block boundary, in the order given
 * </pre>
 */
public final class Checkpoint {
    /** The manifest area at the start of the extent. */
    public static final int MANIFEST_BYTES = 64 * 1024;

    private static final byte[] MAGIC = "R4JCKPT1".getBytes(StandardCharsets.US_ASCII);
    private static final int VERSION = 1;

    private Checkpoint() {}

    /**
     * One checkpointed buffer.
     *
     * @param offset bytes from the start of the data area (a multiple of the block size)
     */
    public record Entry(String name, long offset, long length, int crc32c) {}

    /** What a checkpoint holds. */
    public record Manifest(List<Entry> entries, long dataBytes) {
        /** @return the blocks the checkpoint occupies, manifest included */
        public long blocks(int blockSize) {
            return (MANIFEST_BYTES + dataBytes) / blockSize;
        }
    }

    /**
     * Where a checkpoint lives: whole logical blocks, written and read asynchronously. {@link #of(Controller, long)} is
     * one namespace of a controller; an engine volume (striped over several targets) adapts the same way, through
     * {@code VolumeBlocks} of {@code rdma4j-nvmeof-engine}, so that this module needs no engine.
     */
    public interface Blocks {
        /** @return bytes per block */
        int blockSize();

        /** @return blocks available */
        long blocks();

        /** Writes {@code data} (whole blocks) at block {@code lba}. */
        CompletableFuture<Void> write(long lba, MemorySegment data);

        /** Reads {@code into.byteSize()} bytes (whole blocks) at block {@code lba}. */
        CompletableFuture<Void> read(long lba, MemorySegment into);

        /** Makes completed writes durable. */
        CompletableFuture<Void> flush();

        /** @return namespace {@code nsid} of {@code c} */
        static Blocks of(Controller c, long nsid) {
            NamespaceInfo ns = c.namespace(nsid);
            return new Blocks() {
                @Override
                public int blockSize() {
                    return ns.blockSize();
                }

                @Override
                public long blocks() {
                    return ns.blocks();
                }

                @Override
                public CompletableFuture<Void> write(long lba, MemorySegment data) {
                    return c.write(nsid, lba, data);
                }

                @Override
                public CompletableFuture<Void> read(long lba, MemorySegment into) {
                    return c.read(nsid, lba, into);
                }

                @Override
                public CompletableFuture<Void> flush() {
                    return c.flush(nsid);
                }

                @Override
                public String toString() {
                    return "namespace " + nsid;
                }
            };
        }
    }

    /** CRC32C of a segment of any size. */
    public static int crc32c(MemorySegment s) {
        CRC32C c = new CRC32C();
        for (long off = 0; off < s.byteSize(); off += 1 << 30) {
            c.update(s.asSlice(off, Math.min(1 << 30, s.byteSize() - off)).asByteBuffer());
        }
        return (int) c.getValue();
    }

    /**
     * Writes every buffer, flushes, then writes and flushes the manifest.
     *
     * @param buffers names to contents, in the order to lay them out
     */
    public static Manifest write(Controller c, long nsid, long lba, SequencedMap<String, MemorySegment> buffers) {
        return write(Blocks.of(c, nsid), lba, buffers);
    }

    /**
     * Writes every buffer, flushes, then writes and flushes the manifest, to any {@link Blocks}.
     *
     * @param buffers names to contents, in the order to lay them out
     */
    public static Manifest write(Blocks c, long lba, SequencedMap<String, MemorySegment> buffers) {
        int bs = c.blockSize();
        if (MANIFEST_BYTES % bs != 0) {
            throw new IllegalArgumentException("block size " + bs + " does not divide the 64 KiB manifest area");
        }
        List<Entry> entries = new ArrayList<>();
        long off = 0;
        for (var e : buffers.entrySet()) {
            Segments.requireAlive(e.getValue(), "buffer '" + e.getKey() + "'");
            long len = e.getValue().byteSize();
            entries.add(new Entry(e.getKey(), off, len, crc32c(e.getValue())));
            off += (len + bs - 1) / bs * bs;
        }
        Manifest m = new Manifest(List.copyOf(entries), off);
        byte[] manifest = encode(m);
        long capacity = c.blocks();
        if (lba < 0 || lba + m.blocks(bs) > capacity) {
            throw new IllegalArgumentException("the checkpoint needs " + m.blocks(bs) + " blocks from LBA " + lba
                    + " but " + c + " has " + capacity);
        }
        // 1. Invalidate whatever manifest is there, so a crash from here on leaves none.
        await(c.write(lba, MemorySegment.ofArray(new byte[bs])));
        await(c.flush());
        // 2. The data, all at once: the controller spreads it over its queues.
        long dataLba = lba + MANIFEST_BYTES / bs;
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        int i = 0;
        for (MemorySegment s : buffers.values()) {
            Entry e = entries.get(i++);
            long whole = e.length() / bs * bs;
            if (whole > 0) {
                writes.add(c.write(dataLba + e.offset() / bs, s.asSlice(0, whole)));
            }
            if (whole < e.length()) {
                byte[] tail = new byte[bs];
                MemorySegment.copy(s, ValueLayout.JAVA_BYTE, whole, tail, 0, (int) (e.length() - whole));
                writes.add(c.write(dataLba + (e.offset() + whole) / bs, MemorySegment.ofArray(tail)));
            }
        }
        for (CompletableFuture<Void> w : writes) {
            await(w);
        }
        await(c.flush());
        // 3. The manifest, last.
        await(c.write(lba, MemorySegment.ofArray(manifest)));
        await(c.flush());
        return m;
    }

    /**
     * Reads and checks the manifest at {@code lba}.
     *
     * @throws NvmeException naming why when there is no complete checkpoint there
     */
    public static Manifest readManifest(Controller c, long nsid, long lba) {
        return readManifest(Blocks.of(c, nsid), lba);
    }

    /** Reads and checks the manifest at {@code lba} of {@code c}. */
    public static Manifest readManifest(Blocks c, long lba) {
        byte[] b = new byte[MANIFEST_BYTES];
        await(c.read(lba, MemorySegment.ofArray(b)));
        return decode(b, c + " LBA " + lba);
    }

    /**
     * Reads every entry into the segment {@code sink} gives for it (at least its length) and verifies its CRC32C.
     *
     * @throws NvmeException when an entry's CRC32C does not match
     */
    public static void restore(Controller c, long nsid, long lba, Manifest m, Function<Entry, MemorySegment> sink) {
        restore(Blocks.of(c, nsid), lba, m, sink);
    }

    /** Reads every entry from {@code c} into the segment {@code sink} gives for it and verifies its CRC32C. */
    public static void restore(Blocks c, long lba, Manifest m, Function<Entry, MemorySegment> sink) {
        int bs = c.blockSize();
        long dataLba = lba + MANIFEST_BYTES / bs;
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        List<MemorySegment> targets = new ArrayList<>();
        List<byte[]> tails = new ArrayList<>();
        for (Entry e : m.entries()) {
            MemorySegment s = sink.apply(e);
            if (s.byteSize() < e.length()) {
                throw new IllegalArgumentException(
                        "buffer for '" + e.name() + "' has " + s.byteSize() + " bytes; it needs " + e.length());
            }
            targets.add(s);
            long whole = e.length() / bs * bs;
            if (whole > 0) {
                reads.add(c.read(dataLba + e.offset() / bs, s.asSlice(0, whole)));
            }
            byte[] tail = whole < e.length() ? new byte[bs] : null;
            tails.add(tail);
            if (tail != null) {
                reads.add(c.read(dataLba + (e.offset() + whole) / bs, MemorySegment.ofArray(tail)));
            }
        }
        for (CompletableFuture<Void> r : reads) {
            await(r);
        }
        for (int i = 0; i < m.entries().size(); i++) {
            Entry e = m.entries().get(i);
            MemorySegment s = targets.get(i);
            long whole = e.length() / bs * bs;
            if (tails.get(i) != null) {
                MemorySegment.copy(tails.get(i), 0, s, ValueLayout.JAVA_BYTE, whole, (int) (e.length() - whole));
            }
            int crc = crc32c(s.asSlice(0, e.length()));
            if (crc != e.crc32c()) {
                throw new NvmeException(String.format(
                        "checkpoint entry '%s' read back with CRC32C %08x; the manifest says %08x: the data on the"
                                + " namespace was changed or damaged after the checkpoint",
                        e.name(), crc, e.crc32c()));
            }
        }
    }

    static byte[] encode(Manifest m) {
        byte[] b = new byte[MANIFEST_BYTES];
        System.arraycopy(MAGIC, 0, b, 0, 8);
        Le.put32(b, 8, VERSION);
        Le.put32(b, 12, m.entries().size());
        Le.put64(b, 16, m.dataBytes());
        int o = 32;
        for (Entry e : m.entries()) {
            byte[] name = e.name().getBytes(StandardCharsets.UTF_8);
            if (name.length > 65535 || o + 2 + name.length + 20 + 4 > MANIFEST_BYTES) {
                throw new IllegalArgumentException(
                        "the manifest does not fit in " + MANIFEST_BYTES + " bytes: use fewer or shorter names");
            }
            Le.put16(b, o, name.length);
            System.arraycopy(name, 0, b, o + 2, name.length);
            o += 2 + name.length;
            Le.put64(b, o, e.offset());
            Le.put64(b, o + 8, e.length());
            Le.put32(b, o + 16, e.crc32c());
            o += 20;
        }
        Le.put32(b, 24, o);
        CRC32C crc = new CRC32C();
        crc.update(b, 0, o);
        Le.put32(b, o, (int) crc.getValue());
        return b;
    }

    static Manifest decode(byte[] b, String where) {
        for (int i = 0; i < 8; i++) {
            if (b[i] != MAGIC[i]) {
                throw new NvmeException(
                        "no complete checkpoint at " + where + " (no manifest: the checkpoint was never written,"
                                + " or was interrupted before its manifest)");
            }
        }
        int version = Le.i32(b, 8);
        int count = Le.i32(b, 12);
        int end = Le.i32(b, 24);
        if (version != VERSION || count < 0 || end < 32 || end > MANIFEST_BYTES - 4) {
            throw new NvmeException(
                    "checkpoint manifest at " + where + " is damaged or of an unknown version " + version);
        }
        CRC32C crc = new CRC32C();
        crc.update(b, 0, end);
        if ((int) crc.getValue() != Le.i32(b, end)) {
            throw new NvmeException("checkpoint manifest at " + where
                    + " fails its CRC32C: it is damaged; the checkpoint is not usable");
        }
        List<Entry> entries = new ArrayList<>();
        int o = 32;
        for (int i = 0; i < count; i++) {
            int n = Le.u16(b, o);
            if (o + 2 + n + 20 > end) {
                throw new NvmeException(
                        "checkpoint manifest at " + where + " is inconsistent (entry " + i + " runs past its end)");
            }
            String name = new String(b, o + 2, n, StandardCharsets.UTF_8);
            o += 2 + n;
            entries.add(new Entry(name, Le.i64(b, o), Le.i64(b, o + 8), Le.i32(b, o + 16)));
            o += 20;
        }
        return new Manifest(List.copyOf(entries), Le.i64(b, 16));
    }

    private static void await(CompletableFuture<Void> f) {
        try {
            f.get();
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            while (t instanceof CompletionException && t.getCause() != null) {
                t = t.getCause();
            }
            if (t instanceof RuntimeException r) {
                throw r;
            }
            throw new NvmeException("checkpoint I/O failed: " + t, t);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException("interrupted", e);
        }
    }
}
