package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.weights.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code .safetensors} format: an 8-byte little-endian header length N, N bytes of UTF-8 JSON naming each tensor's
 * dtype, shape and {@code data_offsets} (relative to the first byte after the header), then the packed data.
 * {@link #open} maps a file and parses its header; every tensor is a slice of the mapping, never a copy. Nothing in the
 * header is trusted: the length is capped, the JSON parsed strictly, and offsets must lie inside the file, match the
 * shape and dtype, and cover the data exactly, without overlap. {@link #write} writes what the reference writer writes:
 * {@code __metadata__} first, tensors by dtype size then name, the header padded with spaces to 8 bytes.
 */
public final class Safetensors {
    /** The reference implementation's cap on the header length. */
    public static final long MAX_HEADER = 100_000_000L;

    private Safetensors() {}

    /** A mapped file: its tensors are slices of the mapping, valid until {@link #close()}. */
    public static final class MappedFile implements AutoCloseable {
        private final Arena arena;
        private final TensorSet tensors;

        private MappedFile(Arena arena, TensorSet tensors) {
            this.arena = arena;
            this.tensors = tensors;
        }

        /** {@return the tensors, in the order of their data in the file} */
        public TensorSet tensors() {
            return tensors;
        }

        /** Unmaps the file; idempotent. The tensors' memory is unusable afterwards. */
        @Override
        public void close() {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        }
    }

    /**
     * Maps {@code file} read-only and parses its header.
     *
     * @param file a {@code .safetensors} file
     * @return the mapped file; close it to unmap
     * @throws InvalidArgumentException when the header is malformed; the message says what and where
     * @throws UncheckedIOException when the file cannot be read
     */
    public static MappedFile open(Path file) {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            MemorySegment map = size == 0 ? MemorySegment.NULL : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            return new MappedFile(arena, parse(map, size, file.toString()));
        } catch (IOException e) {
            arena.close();
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Parses a safetensors image held in memory.
     *
     * @param image the whole file's bytes
     * @param source names the image in error messages
     * @return tensors that are slices of {@code image}
     * @throws InvalidArgumentException when the header is malformed
     */
    public static TensorSet parse(MemorySegment image, String source) {
        return parse(image, image.byteSize(), source);
    }

    private static TensorSet parse(MemorySegment map, long size, String source) {
        String where = source + ": ";
        if (size < 8) {
            throw new InvalidArgumentException(
                    where + "file of " + size + " bytes is too short for the 8-byte header length");
        }
        long n = map.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
        if (n < 2 || n > MAX_HEADER) {
            throw new InvalidArgumentException(where + "header length " + Long.toUnsignedString(n) + " is outside [2, "
                    + MAX_HEADER + "]: not a safetensors file, or a corrupt one");
        }
        if (n > size - 8) {
            throw new InvalidArgumentException(
                    where + "header length " + n + " runs past the end of the " + size + "-byte file (truncated?)");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(map.asSlice(8, n).asByteBuffer())
                    .toString();
        } catch (CharacterCodingException e) {
            throw new InvalidArgumentException(where + "header is not valid UTF-8");
        }
        Object root;
        try {
            root = Json.parse(text);
        } catch (InvalidArgumentException e) {
            throw new InvalidArgumentException(where + "header: " + e.getMessage());
        }
        if (!(root instanceof Map<?, ?> top)) {
            throw new InvalidArgumentException(where + "header is not a JSON object");
        }
        long dataStart = 8 + n;
        long dataLen = size - dataStart;
        Map<String, String> metadata = new LinkedHashMap<>();
        record Entry(String name, DType dtype, long[] shape, long begin, long end) {}
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<?, ?> e : top.entrySet()) {
            String name = (String) e.getKey();
            if (name.equals("__metadata__")) {
                if (!(e.getValue() instanceof Map<?, ?> md)) {
                    throw new InvalidArgumentException(where + "__metadata__ is not an object of strings");
                }
                for (Map.Entry<?, ?> m : md.entrySet()) {
                    if (!(m.getValue() instanceof String v)) {
                        throw new InvalidArgumentException(
                                where + "__metadata__ value of \"" + m.getKey() + "\" is not a string");
                    }
                    metadata.put((String) m.getKey(), v);
                }
                continue;
            }
            String t = where + "tensor \"" + name + "\": ";
            if (name.isEmpty()) {
                throw new InvalidArgumentException(where + "a tensor has an empty name");
            }
            if (!(e.getValue() instanceof Map<?, ?> info)) {
                throw new InvalidArgumentException(t + "is not an object");
            }
            for (Object k : info.keySet()) {
                if (!k.equals("dtype") && !k.equals("shape") && !k.equals("data_offsets")) {
                    throw new InvalidArgumentException(t + "unknown field \"" + k + "\"");
                }
            }
            if (!(info.get("dtype") instanceof String dt)) {
                throw new InvalidArgumentException(t + "dtype is missing or not a string");
            }
            DType dtype;
            try {
                dtype = DType.fromSafetensors(dt);
            } catch (InvalidArgumentException x) {
                throw new InvalidArgumentException(t + x.getMessage());
            }
            long[] shape = longs(info.get("shape"), -1, t + "shape");
            long[] off = longs(info.get("data_offsets"), 2, t + "data_offsets");
            long bytes;
            try {
                bytes = Tensor.byteSize(dtype, shape);
            } catch (InvalidArgumentException x) {
                throw new InvalidArgumentException(t + x.getMessage());
            }
            if (off[0] > off[1] || off[1] > dataLen) {
                throw new InvalidArgumentException(t + "data_offsets [" + off[0] + ", " + off[1]
                        + "] are not a range inside the " + dataLen + " data bytes after the header");
            }
            if (off[1] - off[0] != bytes) {
                throw new InvalidArgumentException(t + "data_offsets span " + (off[1] - off[0]) + " bytes but " + dtype
                        + " of shape " + java.util.Arrays.toString(shape) + " takes " + bytes);
            }
            entries.add(new Entry(name, dtype, shape, off[0], off[1]));
        }
        entries.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end));
        long at = 0;
        for (Entry e : entries) {
            if (e.begin() < at) {
                throw new InvalidArgumentException(where + "tensor \"" + e.name() + "\" at [" + e.begin() + ", "
                        + e.end() + "] overlaps the one" + " before it, which ends at " + at);
            }
            if (e.begin() > at) {
                throw new InvalidArgumentException(where + "bytes [" + at + ", " + e.begin()
                        + ") of the data belong to no tensor: the offsets must cover the data contiguously");
            }
            at = e.end();
        }
        if (at != dataLen) {
            throw new InvalidArgumentException(where + "the tensors cover " + at + " data bytes but the file has "
                    + dataLen + " after the header: truncated or trailing bytes");
        }
        List<Tensor> tensors = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            tensors.add(Tensor.host(
                    e.name(), e.dtype(), e.shape(), map.asSlice(dataStart + e.begin(), e.end() - e.begin())));
        }
        return new TensorSet(tensors, metadata);
    }

    private static long[] longs(Object v, int count, String what) {
        if (!(v instanceof List<?> l) || (count >= 0 && l.size() != count) || l.size() > 64) {
            throw new InvalidArgumentException(what + " is missing or not an array of "
                    + (count >= 0 ? count + " integers" : "at most 64 integers"));
        }
        long[] out = new long[l.size()];
        for (int i = 0; i < out.length; i++) {
            if (!(l.get(i) instanceof Long x) || x < 0) {
                throw new InvalidArgumentException(what + "[" + i + "] is not a non-negative integer");
            }
            out[i] = x;
        }
        return out;
    }

    /** {@return the header JSON the reference writer produces for {@code tensors}, padded with spaces to 8 bytes} */
    static byte[] header(List<Tensor> ordered, Map<String, String> metadata) {
        StringBuilder b = new StringBuilder("{");
        if (!metadata.isEmpty()) {
            b.append("\"__metadata__\":{");
            boolean first = true;
            for (Map.Entry<String, String> m : new java.util.TreeMap<>(metadata).entrySet()) {
                b.append(first ? "" : ",")
                        .append(Json.quote(m.getKey()))
                        .append(':')
                        .append(Json.quote(m.getValue()));
                first = false;
            }
            b.append('}');
        }
        long at = 0;
        for (Tensor t : ordered) {
            b.append(b.length() > 1 ? "," : "")
                    .append(Json.quote(t.name()))
                    .append(":{\"dtype\":\"")
                    .append(t.dtype().name())
                    .append("\",\"shape\":[");
            long[] s = t.shape();
            for (int i = 0; i < s.length; i++) {
                b.append(i > 0 ? "," : "").append(s[i]);
            }
            b.append("],\"data_offsets\":[")
                    .append(at)
                    .append(',')
                    .append(at + t.byteSize())
                    .append("]}");
            at += t.byteSize();
        }
        b.append('}');
        byte[] json = b.toString().getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) & ~7;
        byte[] out = new byte[padded];
        System.arraycopy(json, 0, out, 0, json.length);
        java.util.Arrays.fill(out, json.length, padded, (byte) ' ');
        return out;
    }

    /** {@return the tensors in the reference writer's order: larger dtypes first, then by name} */
    static List<Tensor> order(TensorSet set) {
        List<Tensor> l = new ArrayList<>(set.tensors());
        l.sort(Comparator.comparingInt((Tensor t) -> -t.dtype().byteSize()).thenComparing(Tensor::name));
        return l;
    }

    /**
     * Writes {@code set} (host memory only) as a safetensors file, replacing {@code file}.
     *
     * @param file where to write
     * @param set the tensors and metadata
     * @throws InvalidArgumentException when a tensor lives on a device
     * @throws UncheckedIOException when the file cannot be written
     */
    public static void write(Path file, TensorSet set) {
        List<Tensor> ordered = order(set);
        for (Tensor t : ordered) {
            if (t.host() == null) {
                throw new InvalidArgumentException(
                        "tensor " + t.name() + " lives on a device: copy it to host memory before writing a file");
            }
        }
        byte[] header = header(ordered, set.metadata());
        try (FileChannel ch = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            ByteBuffer len =
                    ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, header.length);
            writeFully(ch, len);
            writeFully(ch, ByteBuffer.wrap(header));
            for (Tensor t : ordered) {
                if (t.byteSize() > 0) {
                    writeFully(ch, t.host().asByteBuffer());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
