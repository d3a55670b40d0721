package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** send/recv, inject and inject-write between two endpoints over real providers. */
class MessageTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void sendAndInjectArriveInPostedReceives(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Peer a = new Peer(infos.first(), 1 << 20);
                Peer b = new Peer(infos.first(), 1 << 20)) {
            long peer = a.av.insert(b.ep.name());
            long back = b.av.insert(a.ep.name());
            // two receives: one from the initiator by address, one from anyone
            Peer.post(a, b, () -> b.ep.recv(b.mr, 0, 65536, back, 501));
            Peer.post(a, b, () -> b.ep.recv(b.mr, 65536, 64, Endpoint.ANY_PEER, 502));
            for (int i = 0; i < 65536; i++) {
                a.buffer.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            Peer.post(a, b, () -> a.ep.send(a.mr, 0, 65536, peer, 101));
            Peer.progressUntil(a, b, () -> b.contexts.contains(501L) && a.contexts.contains(101L), "send");
            for (int i = 0; i < 65536; i++) {
                assertEquals((byte) (i * 7), b.buffer.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
            long small = Math.min(16, a.domain.info().injectSize());
            assertTrue(small > 0, "provider offers inject: " + a.domain.info());
            a.buffer.set(ValueLayout.JAVA_LONG, 131072, 0x0102030405060708L);
            Peer.post(a, b, () -> a.ep.inject(a.mr, 131072, small, peer));
            a.buffer.set(ValueLayout.JAVA_LONG, 131072, 0); // inject copied the bytes: the buffer is free on return
            Peer.progressUntil(a, b, () -> b.contexts.contains(502L), "inject");
            assertEquals(0x0102030405060708L, b.buffer.get(ValueLayout.JAVA_LONG, 65536));
            assertEquals(List.of(101L), a.contexts, "inject makes no completion at the initiator");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void injectWriteLandsAtTheTarget(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Peer a = new Peer(infos.first(), 1 << 16);
                Peer b = new Peer(infos.first(), 1 << 16)) {
            long peer = a.av.insert(b.ep.name());
            b.av.insert(a.ep.name());
            RemoteRegion remote = b.mr.remote();
            long n = Math.min(32, a.domain.info().injectSize());
            for (int i = 0; i < n; i++) {
                a.buffer.set(ValueLayout.JAVA_BYTE, i, (byte) (0x40 + i));
            }
            Peer.post(a, b, () -> a.ep.injectWrite(a.mr, 0, n, peer, remote, 1000));
            a.buffer.asSlice(0, n).fill((byte) 0); // the source is free as soon as inject returns
            // an inject-write has no completion anywhere: progress both sides until the bytes show up
            Peer.progressUntil(
                    a,
                    b,
                    () -> {
                        for (int i = 0; i < n; i++) {
                            if (b.buffer.get(ValueLayout.JAVA_BYTE, 1000 + i) != (byte) (0x40 + i)) {
                                return false;
                            }
                        }
                        return true;
                    },
                    "inject-write bytes at the target");
            assertTrue(
                    a.contexts.isEmpty() && b.contexts.isEmpty(), "no completions: " + a.contexts + " " + b.contexts);
        }
    }
}
