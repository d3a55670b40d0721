package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.tcp.Pdu;
import io.rdma4j.nvmeof.volume.VolumeBlocks;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checkpoint layout on an engine volume striped over two scripted targets (what {@code ./rdma4j nvme checkpoint
 * --volume} does): tensors with partial last blocks round-trip, and a target failing a data write leaves no manifest.
 * In the nvmeof package, as the scripted target's knobs (its port, storage and faults) are package-private.
 */
class EngineCheckpointTest {
    @TempDir
    static Path home;

    private static TransferEngine engine;

    @BeforeAll
    static void engine() {
        engine = TransferEngine.builder()
                .name("ckpt-" + ProcessHandle.current().pid())
                .backend("libfabric")
                .provider("tcp")
                .nicFilter("lo")
                .build();
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    private static VolumeSpec spec(ScriptedTarget a, ScriptedTarget b) {
        return VolumeSpec.of(
                        "tcp://127.0.0.1:" + a.server.getLocalPort() + "/" + ScriptedTarget.NQN + "/1",
                        "tcp://127.0.0.1:" + b.server.getLocalPort() + "/" + ScriptedTarget.NQN + "/1")
                .withStripeUnit(16 << 10)
                .withOption("identityDir", home.toString())
                .withOption("keepAliveMs", "0")
                .withOption("ioQueues", "2")
                .withOption("queueDepth", "8");
    }

    private static LinkedHashMap<String, MemorySegment> tensors(Arena arena) {
        LinkedHashMap<String, MemorySegment> m = new LinkedHashMap<>();
        Random r = new Random(9);
        for (var e : List.of(Map.entry("layer0.weight", 300_001), Map.entry("layer0.bias", 77))) {
            byte[] bytes = new byte[e.getValue()];
            r.nextBytes(bytes);
            m.put(e.getKey(), arena.allocate(bytes.length, 4096).copyFrom(MemorySegment.ofArray(bytes)));
        }
        return m;
    }

    @Test
    void tensorsRoundTripThroughAStripedVolume() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(1 << 20);
                ScriptedTarget b = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a, b))) {
            VolumeBlocks blocks = new VolumeBlocks(engine, v, arena);
            LinkedHashMap<String, MemorySegment> in = tensors(arena);
            Checkpoint.Manifest m = Checkpoint.write(blocks, 8, in);
            Checkpoint.Manifest back = Checkpoint.readManifest(blocks, 8);
            assertEquals(m, back);
            Map<String, MemorySegment> out = new HashMap<>();
            Checkpoint.restore(
                    blocks, 8, back, e -> out.computeIfAbsent(e.name(), k -> arena.allocate(e.length(), 4096)));
            for (var e : in.entrySet()) {
                assertEquals(-1, out.get(e.getKey()).mismatch(e.getValue()), e.getKey());
            }
            assertTrue(
                    MemorySegment.ofArray(b.storage).mismatch(MemorySegment.ofArray(new byte[b.storage.length])) >= 0,
                    "target b holds stripes of the checkpoint");
        }
    }

    @Test
    void aFailedDataWriteOnOneTargetLeavesNoManifest() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(1 << 20);
                ScriptedTarget b = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a, b))) {
            VolumeBlocks blocks = new VolumeBlocks(engine, v, arena);
            Checkpoint.write(blocks, 0, tensors(arena)); // a complete checkpoint first: the next one must invalidate it
            AtomicBoolean armed = new AtomicBoolean(true);
            b.fault = (qid, pdu, bytes) -> {
                if (qid >= 1 && pdu instanceof Pdu.R2T && armed.getAndSet(false)) {
                    return null; // target b drops the connection in the middle of the data
                }
                return bytes;
            };
            TransferException e =
                    assertThrows(TransferException.class, () -> Checkpoint.write(blocks, 0, tensors(arena)));
            assertTrue(e.getMessage().contains(":" + b.server.getLocalPort() + "/"), e.getMessage());
            b.fault = (qid, pdu, bytes) -> bytes;
            try (StorageVolume again = engine.openVolume(spec(a, b))) {
                NvmeException none = assertThrows(
                        NvmeException.class, () -> Checkpoint.readManifest(new VolumeBlocks(engine, again, arena), 0));
                assertTrue(none.getMessage().contains("no complete checkpoint"), none.getMessage());
            }
        }
    }
}
