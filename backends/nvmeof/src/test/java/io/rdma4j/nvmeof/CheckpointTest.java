package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.tcp.Pdu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The manifest rule: written last, so an interrupted checkpoint is never read as complete. */
class CheckpointTest {
    @TempDir
    Path home;

    private ConnectOptions options() {
        return ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withIoQueues(2)
                .withQueueDepth(8)
                .withKeepAlive(Duration.ZERO)
                .withIoTimeout(Duration.ofSeconds(5));
    }

    private static LinkedHashMap<String, MemorySegment> tensors(Arena arena) {
        LinkedHashMap<String, MemorySegment> m = new LinkedHashMap<>();
        Random r = new Random(5);
        for (var e : List.of(
                Map.entry("layer0.weight", 300_001),
                Map.entry("layer0.bias", 77),
                Map.entry("optimizer/ß-state", 65536))) {
            byte[] b = new byte[e.getValue()];
            r.nextBytes(b);
            m.put(e.getKey(), arena.allocate(b.length).copyFrom(MemorySegment.ofArray(b)));
        }
        return m;
    }

    @Test
    void restoresEveryBufferAndVerifiesItsCrc() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(4 << 20);
                Arena arena = Arena.ofShared();
                Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
            LinkedHashMap<String, MemorySegment> in = tensors(arena);
            Checkpoint.Manifest written = Checkpoint.write(c, 1, 16, in);
            Checkpoint.Manifest read = Checkpoint.readManifest(c, 1, 16);
            assertEquals(written, read);
            assertEquals(
                    List.copyOf(in.keySet()),
                    read.entries().stream().map(Checkpoint.Entry::name).toList());
            Map<String, MemorySegment> out = new java.util.HashMap<>();
            Checkpoint.restore(c, 1, 16, read, e -> out.computeIfAbsent(e.name(), k -> arena.allocate(e.length())));
            for (var e : in.entrySet()) {
                assertEquals(-1, out.get(e.getKey()).mismatch(e.getValue()), e.getKey());
            }
            // Damage one byte of the data on the target: restore refuses it.
            t.storage[(16 + Checkpoint.MANIFEST_BYTES / 512) * 512 + 5] ^= 1;
            NvmeException bad = assertThrows(
                    NvmeException.class, () -> Checkpoint.restore(c, 1, 16, read, e -> arena.allocate(e.length())));
            assertTrue(
                    bad.getMessage().contains("layer0.weight")
                            && bad.getMessage().contains("CRC32C"),
                    bad.getMessage());
        }
    }

    @Test
    void interruptedCheckpointIsNeverTakenForComplete() throws Exception {
        try (ScriptedTarget t = new ScriptedTarget(4 << 20);
                Arena arena = Arena.ofShared()) {
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
                Checkpoint.write(c, 1, 0, tensors(arena)); // an older, complete checkpoint
                assertEquals(3, Checkpoint.readManifest(c, 1, 0).entries().size());
                // The target goes away in the middle of the next checkpoint's data.
                AtomicInteger r2ts = new AtomicInteger();
                t.fault = (q, p, b) -> p instanceof Pdu.R2T && r2ts.incrementAndGet() == 2 ? null : b;
                assertThrows(NvmeException.class, () -> Checkpoint.write(c, 1, 0, tensors(arena)));
            }
            t.fault = (q, p, b) -> b;
            try (Controller c = Controller.connect(t.target(), ScriptedTarget.NQN, options())) {
                NvmeException e = assertThrows(NvmeException.class, () -> Checkpoint.readManifest(c, 1, 0));
                assertTrue(e.getMessage().contains("no complete checkpoint"), e.getMessage());
            }
        }
    }
}
