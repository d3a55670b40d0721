package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.InvalidArgumentException;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SafetensorsTest {
    @TempDir
    Path dir;

    /** A file as the reference writer lays it out: length, JSON padded with spaces to 8 bytes, packed data. */
    static byte[] file(String json, byte[] data) {
        byte[] j = json.getBytes(StandardCharsets.UTF_8);
        int padded = (j.length + 7) & ~7;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(8)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(padded)
                .array());
        out.writeBytes(j);
        out.writeBytes(" ".repeat(padded - j.length).getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(data);
        return out.toByteArray();
    }

    static byte[] seq(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + 3);
        }
        return b;
    }

    @Test
    void readsWhatTheReferenceWriterEmits() throws Exception {
        // what safetensors' serialize writes for {"a": f32[2,2], "b": bf16[3]} with metadata: __metadata__ first,
        // larger dtypes first, then names, compact JSON, space padding
        String json = "{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                + "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[16,22]}}";
        Path f = dir.resolve("ref.safetensors");
        Files.write(f, file(json, seq(22)));
        try (Safetensors.MappedFile m = Safetensors.open(f)) {
            TensorSet s = m.tensors();
            assertEquals(
                    List.of("a", "b"), s.tensors().stream().map(Tensor::name).toList());
            assertEquals(DType.BF16, s.get("b").dtype());
            assertArrayEquals(new long[] {2, 2}, s.get("a").shape());
            assertEquals(Map.of("format", "pt"), s.metadata());
            assertArrayEquals(
                    java.util.Arrays.copyOfRange(seq(22), 16, 22),
                    s.get("b").host().toArray(ValueLayout.JAVA_BYTE));
            // our writer produces the same bytes
            Path g = dir.resolve("ours.safetensors");
            Safetensors.write(g, s);
            assertArrayEquals(Files.readAllBytes(f), Files.readAllBytes(g));
        }
    }

    @Test
    void readsSpacedJsonAndFp8AndScalars() throws Exception {
        // Python's json.dumps spacing, a scalar and an empty tensor, data order differing from key order
        String json = "{\"z\": {\"dtype\": \"F8_E4M3\", \"shape\": [4], \"data_offsets\": [0, 4]}, "
                + "\"s\": {\"dtype\": \"I64\", \"shape\": [], \"data_offsets\": [4, 12]}, "
                + "\"e\": {\"dtype\": \"F16\", \"shape\": [0, 5], \"data_offsets\": [12, 12]}}";
        Path f = dir.resolve("spaced.safetensors");
        Files.write(f, file(json, seq(12)));
        try (Safetensors.MappedFile m = Safetensors.open(f)) {
            assertEquals(3, m.tensors().size());
            assertEquals(8, m.tensors().get("s").byteSize());
            assertEquals(0, m.tensors().get("e").byteSize());
        }
    }

    @Test
    void roundTripsByteForByte() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(24);
            MemorySegment b = arena.allocate(6);
            a.copyFrom(MemorySegment.ofArray(seq(24)));
            b.copyFrom(MemorySegment.ofArray(seq(6)));
            TensorSet set = new TensorSet(
                    List.of(
                            Tensor.host("w", DType.F8_E5M2, new long[] {6}, b),
                            Tensor.host("x", DType.F32, new long[] {2, 3}, a)),
                    Map.of("step", "7"));
            Path f = dir.resolve("rt.safetensors");
            Safetensors.write(f, set);
            try (Safetensors.MappedFile m = Safetensors.open(f)) {
                for (Tensor t : set.tensors()) {
                    Tensor r = m.tensors().get(t.name());
                    assertEquals(t.dtype(), r.dtype());
                    assertArrayEquals(t.shape(), r.shape());
                    assertArrayEquals(
                            t.host().toArray(ValueLayout.JAVA_BYTE), r.host().toArray(ValueLayout.JAVA_BYTE));
                }
                assertEquals("7", m.tensors().metadata().get("step"));
            }
        }
    }

    private String refuse(byte[] bytes) throws Exception {
        Path f = dir.resolve("bad.safetensors");
        Files.write(f, bytes);
        return assertThrows(InvalidArgumentException.class, () -> Safetensors.open(f))
                .getMessage();
    }

    private static String t(String dtype, String shape, String offsets) {
        return "{\"t\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}}";
    }

    @Test
    void refusesMalformedHeaders() throws Exception {
        assertTrue(refuse(new byte[5]).contains("too short"));
        byte[] huge = file("{}", new byte[0]);
        ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 200_000_000L);
        assertTrue(refuse(huge).contains("outside"));
        byte[] past = file("{}", new byte[0]);
        ByteBuffer.wrap(past).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 4096);
        assertTrue(refuse(past).contains("past the end"));
        assertTrue(refuse(file("{\"t\":", new byte[0])).contains("bad JSON"));
        assertTrue(refuse(file("[1]", new byte[0])).contains("not a JSON object"));
        assertTrue(refuse(file(t("Q8", "[2]", "[0,2]"), new byte[2])).contains("unknown dtype"));
        assertTrue(refuse(file(t("F4", "[2]", "[0,1]"), new byte[1])).contains("packs several"));
        assertTrue(refuse(file(t("F32", "[2]", "[0,4]"), new byte[4])).contains("takes 8"));
        assertTrue(refuse(file(t("F32", "[1]", "[0,4]"), new byte[8])).contains("trailing"));
        assertTrue(refuse(file(t("F32", "[1]", "[4,8]"), new byte[8])).contains("belong to no tensor"));
        assertTrue(refuse(file(t("U8", "[9]", "[0,9]"), new byte[8])).contains("not a range inside"));
        assertTrue(refuse(file(t("U8", "[-1]", "[0,0]"), new byte[0])).contains("non-negative"));
        assertTrue(refuse(file(t("U8", "[2]", "[2,0]"), new byte[2])).contains("not a range"));
        assertTrue(refuse(file(t("F64", "[4611686018427387904,4]", "[0,8]"), new byte[8]))
                .contains("overflows"));
        assertTrue(refuse(file(t("U8", "[2]", "[0,2,4]"), new byte[2])).contains("array of 2"));
        assertTrue(refuse(file(t("U8", "[2.5]", "[0,2]"), new byte[2])).contains("only integers"));
        assertTrue(refuse(file(t("U8", "[99999999999999999999]", "[0,2]"), new byte[2]))
                .contains("64-bit"));
        String overlap = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                + "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]}}";
        assertTrue(refuse(file(overlap, new byte[4])).contains("overlaps"));
        String dup = "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                + "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}";
        assertTrue(refuse(file(dup, new byte[2])).contains("duplicate key"));
        assertTrue(refuse(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", new byte[1]))
                .contains("unknown field"));
        assertTrue(refuse(file("{\"__metadata__\":{\"k\":1}}", new byte[0])).contains("not a string"));
        assertTrue(refuse(file("[".repeat(100) + "]".repeat(100), new byte[0])).contains("nested"));
        byte[] badUtf8 = file("{\"\u00e9\":1}", new byte[0]);
        badUtf8[11] = (byte) 0xff;
        assertTrue(refuse(badUtf8).contains("UTF-8"));
    }
}
