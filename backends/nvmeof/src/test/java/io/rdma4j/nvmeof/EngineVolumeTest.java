package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.Transfer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferResult;
import io.rdma4j.engine.TransferTimeoutException;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.tcp.Pdu;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * NVMe-oF through the engine on the host: volumes striped over scripted NVMe/TCP targets (RAM namespaces on loopback),
 * checking where every stripe landed, bad input refused before any I/O, and a target's failure status named in the
 * transfer's error. The real-target runs are {@code EngineVolumeGuestTest} in the test VM.
 */
class EngineVolumeTest {
    @TempDir
    static Path home;

    private static TransferEngine engine;

    @BeforeAll
    static void engine() {
        engine = TransferEngine.builder()
                .name("volumes-" + ProcessHandle.current().pid())
                .backend("libfabric")
                .provider("tcp")
                .nicFilter("lo")
                .build();
    }

    @AfterAll
    static void close() {
        engine.close();
    }

    private static String ns(ScriptedTarget t) {
        return "tcp://127.0.0.1:" + t.server.getLocalPort() + "/" + ScriptedTarget.NQN + "/1";
    }

    private static VolumeSpec spec(ScriptedTarget... targets) {
        String[] all = new String[targets.length];
        for (int i = 0; i < targets.length; i++) {
            all[i] = ns(targets[i]);
        }
        return VolumeSpec.of(all)
                .withOption("identityDir", home.toString())
                .withOption("ioQueues", "2")
                .withOption("queueDepth", "8")
                .withOption("keepAliveMs", "0")
                .withOption("ioTimeoutMs", "10000");
    }

    private static MemorySegment random(Arena arena, long n, long seed) {
        MemorySegment s = arena.allocate(n, 4096);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < n; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        return s;
    }

    @Test
    void stripesAcrossTwoUnevenTargetsAndReadsBack() throws Exception {
        long unit = 64 << 10;
        try (ScriptedTarget a = new ScriptedTarget(4 << 20);
                ScriptedTarget b = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a, b).withStripeUnit(unit))) {
            assertEquals(5L << 20, v.capacityBytes(), "zones: both up to 1 MiB, then the larger one alone");
            assertEquals(512, v.blockSize());
            long start = 3 * unit - 1024; // two blocks before a unit boundary: the first piece is 1 KiB on target a
            long len = 4L << 20; // runs past the 2 MiB zone boundary into target a alone
            MemorySegment out = random(arena, len + 4096, 1);
            MemorySegment in = arena.allocate(len, 4096);
            VolumeExtent e = v.extent(start / 512, len);
            try (LocalBuffer src = engine.register(out);
                    LocalBuffer dst = engine.register(in)) {
                TransferResult w = engine.write(src, 4096, e, 0, len, TransferOptions.DEFAULT)
                        .future()
                        .get(60, TimeUnit.SECONDS);
                assertEquals(len, w.bytes());
                assertEquals(List.of(0, 1), w.lanesUsed());
                assertTrue(
                        Thread.getAllStackTraces().keySet().stream()
                                .anyMatch(th -> th.getName().endsWith(" qid 1-io")),
                        "a volume's NVMe/TCP queues run on the polled data path, a thread each");
                // where the stripes landed: volume unit u < 32 alternates a, b; from unit 32 on it is a alone at a's
                // unit 16 + ...
                for (long vOff = start; vOff < start + len; vOff += 512) {
                    long u = vOff / unit;
                    ScriptedTarget holder = u < 32 ? (u % 2 == 0 ? a : b) : a;
                    long memberUnit = u < 32 ? u / 2 : 16 + (u - 32);
                    long at = memberUnit * unit + vOff % unit;
                    long srcAt = 4096 + vOff - start;
                    assertEquals(
                            out.get(ValueLayout.JAVA_LONG_UNALIGNED, srcAt),
                            MemorySegment.ofArray(holder.storage).get(ValueLayout.JAVA_LONG_UNALIGNED, at),
                            "volume byte " + vOff + " belongs at byte " + at + " of target "
                                    + (holder == a ? "a" : "b"));
                }
                Transfer r =
                        engine.read(dst, 0, e, 0, len, TransferOptions.DEFAULT.withDeadline(Duration.ofSeconds(60)));
                r.join();
                assertEquals(len, r.bytesCompleted());
                assertEquals(-1, MemorySegment.mismatch(out, 4096, 4096 + len, in, 0, len), "read back differently");
                v.flush().get(10, TimeUnit.SECONDS);
                Plan plan = engine.explain(src, 4096, e, 0, len);
                assertEquals(2, plan.lanes().size());
                assertEquals(
                        len, plan.lanes().get(0).bytes() + plan.lanes().get(1).bytes());
                assertEquals("kernel route", plan.lanes().get(0).localNic());
                assertTrue(plan.reason().contains("loopback"), plan.reason());
            }
        }
    }

    @Test
    void refusesBadInputBeforeAnyIo() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(1 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a).withStripeUnit(4096))) {
            MemorySegment mem = arena.allocate(64 << 10, 4096);
            try (LocalBuffer buf = engine.register(mem)) {
                InvalidArgumentException past =
                        assertThrows(InvalidArgumentException.class, () -> v.extent(2047, 1024));
                assertTrue(past.getMessage().contains("runs past the end"), past.getMessage());
                InvalidArgumentException odd = assertThrows(InvalidArgumentException.class, () -> v.extent(0, 1000));
                assertTrue(odd.getMessage().contains("round it up to 1024"), odd.getMessage());
                VolumeExtent e = v.extent(0, 8192);
                assertTrue(assertThrows(
                                InvalidArgumentException.class,
                                () -> engine.write(buf, 0, e, 4096, 8192, TransferOptions.DEFAULT))
                        .getMessage()
                        .contains("run past the end of extent"));
                assertTrue(assertThrows(
                                InvalidArgumentException.class,
                                () -> engine.write(buf, 0, e, 0, 700, TransferOptions.DEFAULT))
                        .getMessage()
                        .contains("not a positive multiple"));
                assertTrue(assertThrows(
                                InvalidArgumentException.class,
                                () -> engine.write(buf, 0, e, 0, 4096, TransferOptions.tag(7)))
                        .getMessage()
                        .contains("notification tag"));
                assertThrows(
                        InvalidArgumentException.class,
                        () -> engine.write(buf, 60 << 10, e, 0, 8192, TransferOptions.DEFAULT));
                try (Arena confined = Arena.ofConfined()) {
                    LocalBuffer mine = engine.register(confined.allocate(8192, 4096));
                    assertTrue(assertThrows(InvalidArgumentException.class, () -> engine.write(mine, e))
                            .getMessage()
                            .contains("Arena.ofShared()"));
                    mine.close();
                }
                assertTrue(assertThrows(
                                InvalidArgumentException.class, () -> engine.openVolume(spec(a).withStripeUnit(3000)))
                        .getMessage()
                        .contains("power of two"));
                InvalidArgumentException nsid = assertThrows(
                        InvalidArgumentException.class,
                        () -> engine.openVolume(VolumeSpec.of(ns(a).replaceAll("/1$", "/5"))
                                .withOption("identityDir", home.toString())
                                .withOption("keepAliveMs", "0")));
                assertTrue(
                        nsid.getMessage().contains("no active namespace 5")
                                && nsid.getMessage().contains("[1]"),
                        nsid.getMessage());
                assertTrue(
                        assertThrows(
                                        InvalidArgumentException.class,
                                        () -> engine.openVolume(spec(a).withOption("queueDeep", "8")))
                                .getMessage()
                                .contains("queueDepth"),
                        "an unknown option names the known ones");
                assertTrue(
                        assertThrows(InvalidArgumentException.class, () -> VolumeSpec.of("tcp://127.0.0.1:4420/nqn.x"))
                                .getMessage()
                                .contains("TRANSPORT://HOST[:PORT]/NQN/NSID"));
                v.close();
                assertThrows(ClosedException.class, () -> engine.write(buf, 0, e, 0, 4096, TransferOptions.DEFAULT));
                assertThrows(ClosedException.class, () -> v.extent(0, 512));
            }
            assertEquals(
                    0,
                    a.maxInFlight.getOrDefault(1, new AtomicInteger()).get()
                            + a.maxInFlight.getOrDefault(2, new AtomicInteger()).get(),
                    "no I/O command reached the target");
        }
    }

    @Test
    void aTargetFailingAWriteFailsTheTransferWithTheNvmeStatusAndTheTarget() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(2 << 20);
                ScriptedTarget b = new ScriptedTarget(2 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a, b).withStripeUnit(64 << 10))) {
            AtomicInteger responses = new AtomicInteger();
            b.fault = (qid, pdu, bytes) -> {
                if (qid >= 1 && pdu instanceof Pdu.CapsuleResp && responses.incrementAndGet() == 3) {
                    byte[] bad = bytes.clone();
                    bad[8 + 14] = 0x00; // status: DNR, SCT 2 (media), SC 80h: Write Fault
                    bad[8 + 15] = (byte) 0x85;
                    return bad;
                }
                return bytes;
            };
            MemorySegment out = random(arena, 2 << 20, 3);
            try (LocalBuffer src = engine.register(out)) {
                Transfer t = engine.write(src, 0, v.extent(0, 2 << 20), 0, 2 << 20, TransferOptions.DEFAULT);
                CompletionException ce =
                        assertThrows(CompletionException.class, () -> t.future().join());
                TransferException e = assertInstanceOf(TransferException.class, ce.getCause());
                assertTrue(e.getMessage().contains("Write Fault"), e.getMessage());
                assertTrue(
                        e.getMessage().contains(":" + b.server.getLocalPort() + "/" + ScriptedTarget.NQN + " nsid 1"),
                        e.getMessage());
                assertInstanceOf(NvmeStatusException.class, e.getCause());
                assertTrue(t.bytesCompleted() < t.bytesTotal());
            }
        }
    }

    @Test
    void cancelAndDeadlineStopIssuingAndFailTheTransfer() throws Exception {
        try (ScriptedTarget a = new ScriptedTarget(2 << 20);
                Arena arena = Arena.ofShared();
                StorageVolume v = engine.openVolume(spec(a).withStripeUnit(64 << 10))) {
            a.answerReads = false;
            MemorySegment in = arena.allocate(2 << 20, 4096);
            try (LocalBuffer dst = engine.register(in)) {
                Transfer t = engine.read(dst, v.extent(0, 2 << 20));
                assertTrue(t.cancel());
                assertFalse(t.cancel(), "cancelled once");
                assertThrows(CancellationException.class, t::join);
                Transfer d = engine.read(
                        dst,
                        0,
                        v.extent(0, 2 << 20),
                        0,
                        2 << 20,
                        TransferOptions.DEFAULT.withDeadline(Duration.ofMillis(200)));
                TransferTimeoutException te = assertThrows(TransferTimeoutException.class, d::join);
                assertTrue(te.getMessage().contains("did not finish within 200 ms"), te.getMessage());
                assertEquals(0, d.bytesCompleted());
            }
        }
    }
}
