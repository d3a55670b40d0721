package io.rdma4j.examples;

import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.Checkpoint;
import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.Target;
import io.rdma4j.nvmeof.volume.VolumeBlocks;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Checkpoints a few named tensors (host memory) to remote NVMe, then restores them into fresh buffers and checks every
 * byte. The manifest (names, offsets, lengths, CRC32C) is written last, so a checkpoint cut short is never mistaken for
 * a complete one. Either straight to one namespace over NVMe/TCP, or through the transfer engine onto a volume striped
 * over several namespaces (and targets), each reached through the NIC nearest the memory:
 *
 * <pre>
 * java -cp ... io.rdma4j.examples.NvmeCheckpoint HOST:PORT SUBSYSTEM-NQN [NSID [LBA]]
 * java -cp ... io.rdma4j.examples.NvmeCheckpoint --volume tcp://HOST:PORT/NQN/NSID[,...] [LBA]
 * </pre>
 *
 * The command-line form is {@code ./rdma4j nvme checkpoint|restore}.
 */
public final class NvmeCheckpoint {
    private NvmeCheckpoint() {}

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println(
                    "usage: NvmeCheckpoint HOST:PORT SUBSYSTEM-NQN [NSID [LBA]]\n       NvmeCheckpoint --volume tcp://HOST:PORT/NQN/NSID[,...] [LBA]");
            System.exit(2);
        }
        try (Arena arena = Arena.ofShared()) {
            // A toy model: two weight matrices and a bias vector, float32.
            LinkedHashMap<String, MemorySegment> tensors = new LinkedHashMap<>();
            tensors.put("encoder.weight[1024x1024]", tensor(arena, 1024 * 1024, 1));
            tensors.put("encoder.bias[1024]", tensor(arena, 1024, 2));
            tensors.put("decoder.weight[1024x512]", tensor(arena, 1024 * 512, 3));
            if (args[0].equals("--volume")) {
                long lba = args.length > 2 ? Long.parseLong(args[2]) : 0;
                // the engine's peer lanes stay on loopback: only the volume's connections go out, by the NIC it picks
                try (TransferEngine engine = TransferEngine.builder()
                                .backend("libfabric")
                                .provider("tcp")
                                .nicFilter("lo")
                                .build();
                        StorageVolume volume = engine.openVolume(VolumeSpec.of(args[1].split(",")))) {
                    volume.describe().forEach(line -> System.out.println("  " + line));
                    checkpointAndRestore(new VolumeBlocks(engine, volume, arena), lba, tensors, arena);
                }
            } else {
                Target target = Target.parseTcp(args[0]);
                long nsid = args.length > 2 ? Long.parseLong(args[2]) : 1;
                long lba = args.length > 3 ? Long.parseLong(args[3]) : 0;
                try (Controller c = Controller.connect(target, args[1], ConnectOptions.defaults())) {
                    checkpointAndRestore(Checkpoint.Blocks.of(c, nsid), lba, tensors, arena);
                }
            }
        }
    }

    private static void checkpointAndRestore(
            Checkpoint.Blocks blocks, long lba, LinkedHashMap<String, MemorySegment> tensors, Arena arena) {
        long t0 = System.nanoTime();
        Checkpoint.Manifest m = Checkpoint.write(blocks, lba, tensors);
        long t1 = System.nanoTime();
        System.out.printf(
                "checkpointed %d tensors, %d bytes, in %.1f ms%n", m.entries().size(), m.dataBytes(), (t1 - t0) / 1e6);

        Map<String, MemorySegment> restored = new HashMap<>();
        Checkpoint.Manifest back = Checkpoint.readManifest(blocks, lba);
        Checkpoint.restore(
                blocks, lba, back, e -> restored.computeIfAbsent(e.name(), k -> arena.allocate(e.length(), 4096)));
        System.out.printf("restored and CRC32C-verified in %.1f ms%n", (System.nanoTime() - t1) / 1e6);
        for (var e : tensors.entrySet()) {
            if (restored.get(e.getKey()).mismatch(e.getValue()) != -1) {
                throw new IllegalStateException(e.getKey() + " came back different");
            }
            System.out.printf(
                    "  %-28s %9d bytes  identical%n", e.getKey(), e.getValue().byteSize());
        }
    }

    private static MemorySegment tensor(Arena arena, int floats, int seed) {
        MemorySegment s = arena.allocate(ValueLayout.JAVA_FLOAT, floats);
        for (int i = 0; i < floats; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) Math.sin(i * 0.001 + seed));
        }
        return s;
    }
}
