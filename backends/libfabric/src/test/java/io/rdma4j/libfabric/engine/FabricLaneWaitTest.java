package io.rdma4j.libfabric.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.spi.Completions;
import io.rdma4j.engine.spi.EngineBackend;
import io.rdma4j.libfabric.Domain;
import io.rdma4j.libfabric.Fabric;
import io.rdma4j.libfabric.FabricException;
import io.rdma4j.libfabric.Hints;
import io.rdma4j.libfabric.Info;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.libfabric.MemoryRegion;
import io.rdma4j.libfabric.RemoteRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A lane asks for a completion queue with an fd wait object, and a provider that refuses one still gets a working lane,
 * with a plain queue: shm (libfabric 1.17) refuses {@code FI_WAIT_FD}, tcp grants it.
 */
class FabricLaneWaitTest {
    @BeforeAll
    static void libfabric() {
        Libfabric.ensureAvailable();
    }

    @Test
    void aProviderRefusingFdWaitsGetsALaneWithAPlainQueue() {
        try (InfoList infos = Libfabric.getinfo(Hints.rdm().provider("shm"))) {
            Info info = infos.first();
            // the refusal is the provider's own
            try (Fabric f = Fabric.open(info);
                    Domain d = f.openDomain()) {
                assertThrows(FabricException.class, () -> d.openCompletionQueue(64, true));
                d.openCompletionQueue(64, false).close();
            }
            FabricLane a = new FabricLane(0, info, true);
            FabricLane b = new FabricLane(1, info, true);
            try (Arena arena = Arena.ofConfined()) {
                assertEquals(-1, a.waitFd(), "no wait descriptor where the provider refused one");
                // the lanes work: a write from one to the other completes through the plain queue
                MemorySegment src = arena.allocate(4096, 4096);
                MemorySegment dst = arena.allocate(4096, 4096);
                for (int i = 0; i < 4096; i++) {
                    src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
                }
                a.addRegion(1, d -> d.register(src, Domain.ACCESS_ALL));
                MemoryRegion target = b.addRegion(1, d -> d.register(dst, Domain.ACCESS_ALL));
                int ca = a.prepareConnection();
                int cb = b.prepareConnection();
                a.connect(ca, b.endpointInfo(cb));
                b.connect(cb, a.endpointInfo(ca));
                RemoteRegion r = target.remote();
                Completions done = new Completions(16);
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                int rc;
                // the first post may be pushed back while the endpoints reach each other: progress both and retry
                while ((rc = a.post(FabricLane.WRITE, ca, 1, src.address(), 4096, r.address(), r.key(), 0, 42))
                                == EngineBackend.BACK_PRESSURED
                        && System.nanoTime() < end) {
                    a.poll(done, false);
                    b.poll(new Completions(16), false);
                }
                assertEquals(EngineBackend.OK, rc, a.error);
                while (done.count == 0 && System.nanoTime() < end) {
                    a.poll(done, false);
                    b.poll(new Completions(16), false);
                }
                assertEquals(1, done.count, "the write completed");
                assertEquals(42, done.context[0]);
                assertEquals(0, done.status[0], done.errorText[0]);
                assertEquals(-1L, src.mismatch(dst));
            } finally {
                a.close();
                b.close();
            }
        }
    }

    @Test
    void tcpGrantsTheFdWait() {
        try (InfoList infos = Libfabric.getinfo(Hints.rdm().provider("tcp").sourceAddress("127.0.0.1"))) {
            FabricLane lane = new FabricLane(0, infos.first(), true);
            try {
                assertTrue(lane.waitFd() >= 0, "tcp lanes sleep on a descriptor");
                assertFalse(FabricLane.announcesWork(infos.first()) && lane.waitFd() < 0);
            } finally {
                lane.close();
            }
        }
    }
}
