package io.rdma4j.weights.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.weights.DType;
import io.rdma4j.weights.Shard;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A publisher's manifest carries its tensor set's metadata, and a manifest that lies about it is refused. */
class WireTest {
    private static Wire.Manifest manifest(Map<String, String> metadata) {
        return new Wire.Manifest(
                7, 1, List.of(new TensorMeta("w", DType.BF16, new long[] {4, 6}, new Shard(0, 2, 4))), metadata);
    }

    @Test
    void metadataTravelsInOrderWithLongValues() {
        Map<String, String> md = new LinkedHashMap<>();
        md.put("format", "pt");
        md.put("config", "{\"hidden\": 4096}".repeat(2000)); // 32 KB of JSON, as model configs are
        md.put("ünïcode", "värde");
        byte[] bytes = Wire.manifest(manifest(md));
        Wire.Manifest back = Wire.manifest(MemorySegment.ofArray(bytes), "trainer-1");
        assertEquals(List.copyOf(md.entrySet()), List.copyOf(back.metadata().entrySet()));
        assertEquals(7, back.epoch());
        assertEquals(1, back.rank());
        assertArrayEquals(new long[] {4, 6}, back.tensors().getFirst().shape());
    }

    @Test
    void aRepeatedKeyOrAnOversizedCountIsRefused() {
        Map<String, String> ab = new LinkedHashMap<>();
        ab.put("a", "x");
        ab.put("b", "y");
        byte[] twice = Wire.manifest(manifest(ab));
        // the manifest ends with key "b" (4-byte length, 'b') and value "y" (4-byte length, 'y'): make the key "a"
        assertEquals('b', twice[twice.length - 6]);
        twice[twice.length - 6] = 'a';
        InvalidArgumentException dup = assertThrows(
                InvalidArgumentException.class, () -> Wire.manifest(MemorySegment.ofArray(twice), "trainer-0"));
        assertTrue(dup.getMessage().contains("metadata key 'a' appears twice"), dup.getMessage());
        assertTrue(dup.getMessage().startsWith("trainer-0 sent a malformed manifest"), dup.getMessage());

        byte[] none = Wire.manifest(manifest(Map.of()));
        ByteBuffer.wrap(none).putInt(none.length - 4, 1 << 30);
        InvalidArgumentException count = assertThrows(
                InvalidArgumentException.class, () -> Wire.manifest(MemorySegment.ofArray(none), "trainer-0"));
        assertTrue(count.getMessage().contains("count 1073741824 outside [0, 4096]"), count.getMessage());
    }
}
