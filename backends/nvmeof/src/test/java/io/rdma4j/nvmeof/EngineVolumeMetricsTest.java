package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.tcp.Pdu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The meters of volumes in an engine built with a registry: each volume write and read is timed by size class, a failed
 * one counted by cause, and the NVMe/TCP queues the volume opened publish their own per-queue meters, tagged with their
 * target, until the volume closes.
 */
class EngineVolumeMetricsTest {
    @TempDir
    Path home;

    private VolumeSpec spec(ScriptedTarget... targets) {
        String[] all = new String[targets.length];
        for (int i = 0; i < targets.length; i++) {
            all[i] = "tcp://127.0.0.1:" + targets[i].server.getLocalPort() + "/" + ScriptedTarget.NQN + "/1";
        }
        return VolumeSpec.of(all)
                .withStripeUnit(64 << 10)
                .withOption("identityDir", home.toString())
                .withOption("ioQueues", "2")
                .withOption("queueDepth", "8")
                .withOption("keepAliveMs", "0")
                .withOption("ioTimeoutMs", "10000");
    }

    @Test
    void volumeTransfersAndTheirQueuesAreMetered() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        String name = "volume-metrics-" + ProcessHandle.current().pid();
        long len = 1 << 20;
        try (TransferEngine engine = TransferEngine.builder()
                        .name(name)
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .meterRegistry(registry)
                        .build();
                ScriptedTarget a = new ScriptedTarget(2 << 20);
                ScriptedTarget b = new ScriptedTarget(2 << 20);
                Arena arena = Arena.ofShared()) {
            MemorySegment mem = arena.allocate(len, 4096);
            try (StorageVolume v = engine.openVolume(spec(a, b));
                    LocalBuffer buf = engine.register(mem)) {
                engine.write(buf, v.extent(0, len)).join();
                engine.write(buf, 0, v.extent(0, 8192), 0, 8192, TransferOptions.DEFAULT)
                        .join();
                engine.read(buf, v.extent(0, len)).join();

                assertEquals(1, volumeTimer(registry, "write", "1MiB").count());
                assertEquals(1, volumeTimer(registry, "write", "64KiB").count(), "the 8 KiB write");
                assertEquals(1, volumeTimer(registry, "read", "1MiB").count());
                assertEquals(0, volumeTimer(registry, "read", "64KiB").count());
                assertEquals(0, failures(registry, "transfer"));

                // the NVMe queues of both targets: every byte of the three transfers went through one of them
                Set<String> targets = new TreeSet<>();
                for (Meter m : registry.get("rdma4j.nvme.commands").meters()) {
                    targets.add(m.getId().getTag("target"));
                }
                assertEquals(
                        new TreeSet<>(List.of(a.target().toString(), b.target().toString())), targets);
                double bytes = registry.get("rdma4j.nvme.bytes").counters().stream()
                        .mapToDouble(Counter::count)
                        .sum();
                assertEquals(2 * len + 8192, (long) bytes);

                // a target answering Write Fault: the write fails, counted under its cause
                AtomicBoolean once = new AtomicBoolean();
                b.fault = (qid, pdu, out) -> {
                    if (qid >= 1 && pdu instanceof Pdu.CapsuleResp && once.compareAndSet(false, true)) {
                        byte[] bad = out.clone();
                        bad[8 + 14] = 0x00; // status: DNR, SCT 2 (media), SC 80h: Write Fault
                        bad[8 + 15] = (byte) 0x85;
                        return bad;
                    }
                    return out;
                };
                assertThrows(
                        TransferException.class,
                        () -> engine.write(buf, v.extent(0, len)).join());
                assertEquals(1, failures(registry, "transfer"));
                assertEquals(1, volumeTimer(registry, "write", "1MiB").count(), "a failed write is not timed");
                double errors = registry.get("rdma4j.nvme.errors").counters().stream()
                        .mapToDouble(Counter::count)
                        .sum();
                assertEquals(1, (long) errors);
            }
            assertTrue(
                    registry.find("rdma4j.nvme.commands").meters().isEmpty(),
                    "a closed volume's queues leave no meters behind");
            assertEquals(1, volumeTimer(registry, "read", "1MiB").count(), "the engine's meters stay while it is open");
        }
        assertEquals(List.of(), registry.getMeters(), "a closed engine leaves no meters behind");
    }

    private static Timer volumeTimer(MeterRegistry registry, String op, String size) {
        return registry.get("rdma4j.volume.duration")
                .tag("op", op)
                .tag("size", size)
                .timer();
    }

    private static long failures(MeterRegistry registry, String cause) {
        return (long) registry.get("rdma4j.volume.failures")
                .tag("cause", cause)
                .counter()
                .count();
    }
}
