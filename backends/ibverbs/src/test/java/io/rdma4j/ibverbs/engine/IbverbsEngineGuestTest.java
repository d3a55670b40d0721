package io.rdma4j.ibverbs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.BitSet;
import java.util.ServiceLoader;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The ibverbs engine backend on Soft-RoCE: two backends in one process, connected lane to lane through endpoint bytes.
 */
@Tag("testvm")
class IbverbsEngineGuestTest {
    /** {@return the ibverbs engine backend provider, as ServiceLoader lists it} */
    static EngineBackendProvider provider() {
        for (EngineBackendProvider p : ServiceLoader.load(EngineBackendProvider.class)) {
            if (p.name().equals("ibverbs")) {
                return p;
            }
        }
        throw new AssertionError("ServiceLoader does not list the ibverbs provider");
    }

    /** Polls {@code lane} of {@code b} until {@code n} completions were handed to {@code each}. */
    private static void await(EngineBackend b, int lane, int n, Completions out, IntConsumer each) {
        long deadline = System.nanoTime() + 120_000_000_000L;
        int got = 0;
        while (got < n) {
            int k = b.poll(lane, out);
            for (int i = 0; i < k; i++) {
                each.accept(i);
            }
            got += k;
            if (k == 0 && System.nanoTime() > deadline) {
                throw new AssertionError("only " + got + " of " + n + " completions on lane " + lane);
            }
        }
    }

    @Test
    void writesReadsImmediatesBackPressureAndLaneRebuild() {
        EngineBackendProvider p = provider();
        assumeTrue(p.isAvailable(), p.unavailabilityCause());
        BackendConfig cfg = new BackendConfig(null, 2, 16, BackendOptions.DEFAULTS.withDevice("rxe0"));
        try (EngineBackend a = p.open(cfg);
                EngineBackend b = p.open(cfg);
                Arena arena = Arena.ofShared()) {
            assertEquals(2, a.lanes().size());
            assertEquals("rxe0", a.lanes().get(1).device());
            int ca = a.prepareConnection(1);
            int cb = b.prepareConnection(1);
            assertThrows(IllegalArgumentException.class, () -> a.connect(1, ca, new byte[27]));
            a.connect(1, ca, b.endpointInfo(1, cb));
            b.connect(1, cb, a.endpointInfo(1, ca));
            MemorySegment src = arena.allocate(1 << 20, 4096);
            MemorySegment dst = arena.allocate(1 << 20, 4096);
            for (int i = 0; i < (1 << 18); i++) {
                src.setAtIndex(ValueLayout.JAVA_INT, i, i ^ 0x13579BDF);
            }
            BackendRegistration rs = a.register(src);
            BackendRegistration rd = b.register(dst);
            Completions out = new Completions(8);

            // 256 writes of 4 KiB each, selectively signaled: every context is reported once
            BitSet seen = new BitSet();
            int posted = 0;
            while (posted < 256) {
                long off = posted * 4096L;
                int rc = a.postWrite(
                        1,
                        ca,
                        rs.handle(),
                        src.address() + off,
                        4096,
                        rd.remoteAddress(1) + off,
                        rd.remoteKey(1),
                        1000 + posted);
                if (rc == EngineBackend.BACK_PRESSURED) {
                    int k = a.poll(1, out);
                    for (int i = 0; i < k; i++) {
                        assertEquals(0, out.status[i], out.errorText[i]);
                        seen.set((int) out.context[i] - 1000);
                    }
                    continue;
                }
                assertEquals(EngineBackend.OK, rc);
                posted++;
            }
            await(a, 1, 256 - seen.cardinality(), out, i -> {
                assertEquals(Completions.LOCAL, out.kind[i]);
                assertEquals(0, out.status[i], out.errorText[i]);
                assertTrue(!seen.get((int) out.context[i] - 1000), "context reported twice");
                seen.set((int) out.context[i] - 1000);
            });
            assertEquals(256, seen.cardinality());
            assertEquals(-1, src.mismatch(dst));

            // write with immediate: the target sees the value
            assertEquals(
                    EngineBackend.OK,
                    a.postWriteImmediate(
                            1,
                            ca,
                            rs.handle(),
                            src.address(),
                            64,
                            rd.remoteAddress(1),
                            rd.remoteKey(1),
                            0xFEEDBEEF,
                            7));
            await(a, 1, 1, out, i -> assertEquals(7, out.context[i]));
            await(b, 1, 1, out, i -> {
                assertEquals(Completions.REMOTE_IMMEDIATE, out.kind[i]);
                assertEquals(0xFEEDBEEF, out.immediate[i]);
            });

            // read back into the source's tail
            dst.asSlice(0, 4096).fill((byte) 0x42);
            assertEquals(
                    EngineBackend.OK,
                    a.postRead(
                            1, ca, rs.handle(), src.address() + 8192, 4096, rd.remoteAddress(1), rd.remoteKey(1), 9));
            await(a, 1, 1, out, i -> assertEquals(0, out.status[i], out.errorText[i]));
            assertEquals(0x42, src.get(ValueLayout.JAVA_BYTE, 8192 + 4095));

            // a wrong key fails the lane on both ends; both rebuild and work again
            assertEquals(
                    EngineBackend.OK,
                    a.postWrite(
                            1,
                            ca,
                            rs.handle(),
                            src.address(),
                            64,
                            rd.remoteAddress(1),
                            rd.remoteKey(1) ^ 0x777700,
                            11));
            await(a, 1, 1, out, i -> {
                assertEquals(11, out.context[i]);
                assertTrue(out.status[i] != 0 && out.errorText[i].contains("IBV_WC_REM_ACCESS_ERR"), out.errorText[i]);
            });
            assertNotNull(a.laneError(1));
            assertTrue(a.laneError(1).contains("IBV_WC_REM_ACCESS_ERR"), a.laneError(1));
            assertEquals(
                    EngineBackend.FAILED,
                    a.postWrite(1, ca, rs.handle(), src.address(), 64, rd.remoteAddress(1), rd.remoteKey(1), 12));
            long until = System.nanoTime() + 30_000_000_000L;
            while (b.laneError(1) == null && System.nanoTime() < until) {
                b.poll(1, out);
            }
            assertNotNull(b.laneError(1), "the target's queue pair goes to the error state too");
            assertNull(a.laneError(0), "other lanes are unaffected");
            assertTrue(a.recover(1));
            assertTrue(b.recover(1));
            assertNull(a.laneError(1));
            assertEquals(
                    EngineBackend.OK,
                    a.postWrite(1, ca, rs.handle(), src.address(), 4096, rd.remoteAddress(1), rd.remoteKey(1), 13));
            await(a, 1, 1, out, i -> {
                assertEquals(13, out.context[i]);
                assertEquals(0, out.status[i], out.errorText[i]);
            });
            rs.close();
            rd.close();
        }
    }
}
