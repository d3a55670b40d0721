package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The FI_CONTEXT/FI_CONTEXT2 path (efa-direct and others need it): operations get context slots of native memory and
 * callers still see their own numbers in completions. Run against real providers with the slots forced on.
 */
class ContextModeTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void contextsComeBackThroughSlots(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Peer a = new Peer(infos.first(), 1 << 20, true);
                Peer b = new Peer(infos.first(), 1 << 20, true)) {
            long peer = a.av.insert(b.ep.name());
            long back = b.av.insert(a.ep.name());
            RemoteRegion remote = b.mr.remote();
            b.buffer.set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            Peer.post(a, b, () -> a.ep.write(a.mr, 0, 4096, peer, remote, 4096, 1001));
            Peer.post(a, b, () -> a.ep.read(a.mr, 8192, 8, peer, remote, 0, 1002));
            Peer.post(a, b, () -> a.ep.writeData(a.mr, 0, 64, 77, peer, remote, 0, 1003));
            Peer.post(a, b, () -> b.ep.recv(b.mr, 65536, 128, back, 2001));
            a.buffer.set(ValueLayout.JAVA_LONG, 16384, 42L);
            Peer.post(a, b, () -> a.ep.send(a.mr, 16384, 8, peer, 1004));
            Peer.progressUntil(
                    a,
                    b,
                    () -> a.contexts.size() == 4 && b.contexts.size() == 1 && b.remoteData.size() == 1,
                    "all completions");
            assertEquals(
                    List.of(1001L, 1002L, 1003L, 1004L),
                    a.contexts.stream().sorted().toList());
            assertEquals(List.of(2001L), b.contexts);
            assertEquals(List.of(77L), b.remoteData);
            assertEquals(0x1122334455667788L, a.buffer.get(ValueLayout.JAVA_LONG, 8192));
            assertEquals(42L, b.buffer.get(ValueLayout.JAVA_LONG, 65536));
            assertEquals(0, a.ep.contextPool().inUse(), "every slot is back after its completion");
            assertEquals(0, b.ep.contextPool().inUse());
        }
    }

    @Test
    void aFullPoolIsBackPressureNotAFailure() {
        ContextPool pool = new ContextPool(3);
        try {
            long s1 = pool.acquire(11);
            long s2 = pool.acquire(12);
            long s3 = pool.acquire(13);
            assertEquals(0, pool.acquire(14));
            assertTrue(pool.contains(s1) && pool.contains(s3) && !pool.contains(s3 + ContextPool.SLOT));
            assertEquals(12L, pool.release(s2));
            assertEquals(s2, pool.acquire(15));
            assertEquals(15L, pool.release(s2));
            assertEquals(11L, pool.release(s1));
            assertEquals(13L, pool.release(s3));
            assertEquals(0, pool.inUse());
        } finally {
            pool.close();
        }
    }
}
