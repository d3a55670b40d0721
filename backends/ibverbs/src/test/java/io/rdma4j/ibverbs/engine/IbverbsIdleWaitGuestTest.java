package io.rdma4j.ibverbs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.BackendRegistration;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.engine.spi.IdleWait;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An idle progress thread's kernel wait on Soft-RoCE: the call that arms the lane's completion queue does not sleep
 * (the thread polls once more first), the next sleeps until a peer's write with immediate data arrives (which its
 * completion channel announces), a wake, or the time is up; a plain write into its memory needs no wake at all.
 */
@Tag("testvm")
class IbverbsIdleWaitGuestTest {
    private static final long LONG_WAIT = 60_000_000_000L;
    private static final long SHORT_WAIT = 20_000_000L;

    @Test
    void sleepsUntilAnImmediateArrivesOrAWake() {
        EngineBackendProvider p = IbverbsEngineGuestTest.provider();
        assumeTrue(p.isAvailable(), p.unavailabilityCause());
        BackendConfig cfg = new BackendConfig(null, 1, 16, BackendOptions.DEFAULTS.withDevice("rxe0"));
        try (EngineBackend a = p.open(cfg);
                EngineBackend b = p.open(cfg);
                Arena arena = Arena.ofShared()) {
            int ca = a.prepareConnection(0);
            int cb = b.prepareConnection(0);
            a.connect(0, ca, b.endpointInfo(0, cb));
            b.connect(0, cb, a.endpointInfo(0, ca));
            MemorySegment src = arena.allocate(1 << 16, 4096);
            MemorySegment dst = arena.allocate(1 << 16, 4096);
            src.fill((byte) 0x5A);
            BackendRegistration rs = a.register(src);
            BackendRegistration rd = b.register(dst);
            Completions out = new Completions(8);
            try (IdleWait w = b.idleWait(new int[] {0})) {
                assertNotNull(w, "the ibverbs backend offers a kernel wait");
                assertFalse(w.await(LONG_WAIT), "the call that arms the queue returns at once, to poll once more");
                assertEquals(0, b.poll(0, out));
                assertFalse(w.await(SHORT_WAIT), "nothing arrived: the time runs out");

                // a plain write lands without waking the target: it gives the target no completion
                assertEquals(
                        EngineBackend.OK,
                        a.postWrite(0, ca, rs.handle(), src.address(), 4096, rd.remoteAddress(0), rd.remoteKey(0), 1));
                awaitOne(a, out);
                assertEquals(0, out.status[0], out.errorText[0]);
                assertEquals((byte) 0x5A, dst.get(ValueLayout.JAVA_BYTE, 4095));
                assertFalse(w.await(SHORT_WAIT), "a plain write announces nothing at the target");

                // a write with immediate data completes at the target: its channel wakes the sleeper
                assertEquals(
                        EngineBackend.OK,
                        a.postWriteImmediate(
                                0,
                                ca,
                                rs.handle(),
                                src.address(),
                                64,
                                rd.remoteAddress(0),
                                rd.remoteKey(0),
                                0x1234,
                                2));
                assertTrue(w.await(LONG_WAIT), "the immediate's completion ends the sleep (or its event is found)");
                awaitOne(b, out);
                assertEquals(Completions.REMOTE_IMMEDIATE, out.kind[0]);
                assertEquals(0x1234, out.immediate[0]);
                awaitOne(a, out);
                // the call above either slept and woke on the event (then the next call takes it, arms the queue again
                // and returns true at once) or found the event pending and took it itself; then nothing is new
                int taken = 0;
                while (w.await(SHORT_WAIT)) {
                    taken++;
                    assertTrue(taken == 1, "the event is taken once, then the armed queue sleeps");
                    assertEquals(0, b.poll(0, out));
                }

                // a wake from another thread, before or during the sleep
                w.wake();
                assertTrue(w.await(LONG_WAIT), "a wake before the sleep ends it at once");
                Thread waker = Thread.ofPlatform().start(() -> {
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                    w.wake();
                });
                assertTrue(w.await(LONG_WAIT), "a wake during the sleep ends it");
                waker.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Polls lane 0 of {@code e} until one completion is in {@code out} (at index 0). */
    private static void awaitOne(EngineBackend e, Completions out) {
        long deadline = System.nanoTime() + LONG_WAIT;
        while (e.poll(0, out) == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no completion on lane 0 within 60 s");
            }
        }
    }
}
