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

/**
 * A publisher's manifest carries its tensor set's metadata, and a manifest that lies about it is refused; a plan
 * carries the number of the rank's next drop notice.
 */
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

    @Test
    void aPlanCarriesTheNextNoticeNumberAndNothingWider() {
        Wire.PlanMessage p =
                new Wire.PlanMessage(2, 9, 17, 0xfffe, List.of(new Wire.InPiece(4096, 8192, 1, 0, List.of())));
        byte[] bytes = Wire.plan(p);
        assertEquals(p, Wire.plan(MemorySegment.ofArray(bytes), "trainer-2", 1 << 20));
        // length, magic, rank, epoch, plan id, then the notice number
        ByteBuffer.wrap(bytes).putInt(20, 0x10000);
        InvalidArgumentException wide = assertThrows(
                InvalidArgumentException.class, () -> Wire.plan(MemorySegment.ofArray(bytes), "trainer-2", 1 << 20));
        assertTrue(wide.getMessage().contains("drop notice number 65536 is not a 16-bit number"), wide.getMessage());
    }

    @Test
    void noticeNumbersWrap() {
        assertTrue(Tags.noticeBefore(0xffff, 0), "drawn just before the count wrapped");
        assertTrue(Tags.noticeBefore(3, 4));
        assertTrue(!Tags.noticeBefore(4, 4) && !Tags.noticeBefore(5, 4) && !Tags.noticeBefore(0, 0xffff));
    }
}
