package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.Libc;
import java.util.LinkedHashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Loading libfabric, every provider it offers, and shm endpoints leaves the JVM's own signal handlers in place. */
class SignalSafetyTest {
    /** SIGILL, SIGBUS, SIGFPE, SIGSEGV: the ones HotSpot relies on. */
    private static final int[] JVM_SIGNALS = {4, 7, 8, 11};

    private static long[] handlers() {
        long[] h = new long[JVM_SIGNALS.length];
        for (int i = 0; i < h.length; i++) {
            h[i] = Libc.signalHandler(JVM_SIGNALS[i]);
        }
        return h;
    }

    @Test
    void jvmSignalHandlersSurviveProvidersAndEndpoints() {
        long[] before = handlers();
        for (long h : before) {
            assertTrue(h != 0 && h != 1, "the JVM's handler should be installed, found " + h);
        }
        Libfabric.ensureAvailable();
        Set<String> providers = new LinkedHashSet<>();
        try (InfoList all = Libfabric.getinfo(Hints.none())) {
            for (Info info : all) {
                if (providers.add(info.provider())) {
                    try (Fabric f = Fabric.open(info)) {
                        f.info();
                    } catch (FabricException e) {
                        // a provider without its hardware may refuse to open a fabric; loading it is what matters here
                    }
                }
            }
        }
        try (InfoList shm = Libfabric.getinfo(Peer.hints("shm"));
                Peer a = new Peer(shm.first(), 4096);
                Peer b = new Peer(shm.first(), 4096)) {
            long peer = a.av.insert(b.ep.name());
            Peer.post(a, b, () -> a.ep.writeData(a.mr, 0, 4096, 1, peer, b.mr.remote(), 0, 1));
            Peer.progressUntil(a, b, () -> !b.remoteData.isEmpty(), "writedata");
        }
        assertTrue(providers.contains("shm"), providers.toString());
        assertArrayEquals(before, handlers(), "handlers of SIGILL, SIGBUS, SIGFPE, SIGSEGV after loading " + providers);
    }
}
