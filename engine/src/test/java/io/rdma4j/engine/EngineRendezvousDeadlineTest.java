package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import io.rdma4j.rendezvous.Security;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link TransferEngine.Builder#rendezvousDeadline}: checked, and the deadline of each call to the directory and of
 * each lane handshake with a peer.
 */
class EngineRendezvousDeadlineTest {
    @Test
    void deadlinesOutOfRangeAreRefusedNamingTheSetting() {
        for (Duration d :
                List.of(Duration.ZERO, Duration.ofMillis(99), Duration.ofMinutes(11), Duration.ofSeconds(-1))) {
            var e = assertThrows(
                    InvalidArgumentException.class,
                    () -> TransferEngine.builder().rendezvousDeadline(d).build());
            assertTrue(e.getMessage().contains("TransferEngine.Builder.rendezvousDeadline()"), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> TransferEngine.builder().rendezvousDeadline(null));
    }

    /**
     * A directory that takes the connection and never answers: the engine gives up after its deadline, and the error
     * says so: gRPC's message carries the deadline it applied (15 s, whatever the builder said, before the setting
     * existed).
     */
    @Test
    void aSilentDirectoryFailsTheBuildAtTheDeadline() throws Exception {
        try (Silent silent = new Silent()) {
            var e = assertThrows(
                    RendezvousException.class,
                    () -> TestEngines.tcp("silentdir", 1)
                            .directory(silent.address(), Security.none())
                            .rendezvousDeadline(Duration.ofMillis(700))
                            .build());
            assertDeadline(e, 0.7);
        }
    }

    /**
     * A peer in the directory whose handshake service takes the connection and never answers (its entry is a live
     * engine's, with the handshake address pointed at a silent socket): the first write to it fails after the builder's
     * deadline, naming the peer and the deadline (it waited 15 s before the setting existed).
     */
    @Test
    void aSilentPeerFailsItsHandshakeAtTheDeadline() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        try (Silent silent = new Silent();
                DirectoryServer dir = DirectoryServer.builder().port(0).start();
                Arena arena = Arena.ofShared();
                TransferEngine a = TestEngines.tcp("handshake-a", 1)
                        .directory(dir.target(), Security.none())
                        .rendezvousDeadline(Duration.ofMillis(700))
                        .build();
                TransferEngine b = TestEngines.tcp("handshake-b", 1)
                        .directory(dir.target(), Security.none())
                        .build();
                Rendezvous r = Rendezvous.connect(dir.target(), Security.none())) {
            MemorySegment m = TestEngines.allocate(arena, 1 << 16);
            try (LocalBuffer src = a.register(m);
                    LocalBuffer sink = b.register(m)) {
                b.publish("sink", sink, Access.anyPeer());
                PeerInfo real = r.resolve(b.name()).orElseThrow();
                BufferInfo buffer = r.lookup(b.name() + "/sink").orElseThrow();
                try (Announcement mute = r.announce(
                        new PeerInfo("mute-peer", silent.address(), real.host(), real.generation(), real.lanes()),
                        Duration.ofSeconds(30))) {
                    mute.publish(new BufferInfo(
                            "mute-peer/sink",
                            "mute-peer",
                            buffer.length(),
                            buffer.memoryKind(),
                            buffer.locality(),
                            buffer.generation(),
                            buffer.lanes(),
                            buffer.access()));
                    RemoteBuffer dst = a.peer("mute-peer").buffer("sink");
                    var e = assertThrows(
                            PeerLostException.class,
                            () -> a.write(src, 0, dst, 0, 4096, TransferOptions.DEFAULT)
                                    .join());
                    assertTrue(e.getMessage().contains("handshake with peer 'mute-peer'"), e.getMessage());
                    assertDeadline(e, 0.7);
                }
            }
        }
    }

    /** Asserts that {@code e} says gRPC gave up after about {@code seconds}, the deadline the builder set. */
    private static void assertDeadline(Exception e, double seconds) {
        String m = e.getMessage();
        Matcher after = Pattern.compile("deadline exceeded after ([0-9.]+)s").matcher(m);
        assertTrue(after.find(), m);
        double applied = Double.parseDouble(after.group(1));
        assertTrue(applied > seconds - 0.2 && applied < seconds + 0.2, m);
    }

    /** A loopback socket that accepts connections and never says a word. */
    private static final class Silent implements AutoCloseable {
        private final ServerSocket socket = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        private final List<Socket> held = new ArrayList<>();
        private final Thread acceptor;

        Silent() throws IOException {
            acceptor = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        Socket s = socket.accept();
                        synchronized (held) {
                            held.add(s);
                        }
                    }
                } catch (IOException closed) {
                    // closing
                }
            });
        }

        String address() {
            return "127.0.0.1:" + socket.getLocalPort();
        }

        @Override
        public void close() throws IOException, InterruptedException {
            socket.close();
            acceptor.join();
            synchronized (held) {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
