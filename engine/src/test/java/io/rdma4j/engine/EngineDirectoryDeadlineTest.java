package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.rendezvous.RendezvousException;
import io.rdma4j.rendezvous.Security;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** {@link TransferEngine.Builder#directoryDeadline}: checked, and the deadline of every directory call. */
class EngineDirectoryDeadlineTest {
    @Test
    void deadlinesOutOfRangeAreRefusedNamingTheSetting() {
        for (Duration d :
                List.of(Duration.ZERO, Duration.ofMillis(99), Duration.ofMinutes(11), Duration.ofSeconds(-1))) {
            var e = assertThrows(
                    InvalidArgumentException.class,
                    () -> TransferEngine.builder().directoryDeadline(d).build());
            assertTrue(e.getMessage().contains("TransferEngine.Builder.directoryDeadline()"), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> TransferEngine.builder().directoryDeadline(null));
    }

    /**
     * A directory that takes the connection and never answers: the engine gives up after its deadline, and the error
     * says so: gRPC's message carries the deadline it applied (15 s, whatever the builder said, before the setting
     * existed).
     */
    @Test
    void aSilentDirectoryFailsTheBuildAtTheDeadline() throws Exception {
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread acceptor = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        Socket s = silent.accept();
                        synchronized (held) {
                            held.add(s);
                        }
                    }
                } catch (java.io.IOException closed) {
                    // the test is over
                }
            });
            var e = assertThrows(
                    RendezvousException.class,
                    () -> TransferEngine.builder()
                            .backend("libfabric")
                            .provider("tcp")
                            .directory("127.0.0.1:" + silent.getLocalPort(), Security.none())
                            .directoryDeadline(Duration.ofMillis(700))
                            .build());
            String m = e.getMessage();
            Matcher after =
                    Pattern.compile("deadline exceeded after ([0-9.]+)s").matcher(m);
            assertTrue(after.find(), m);
            // gRPC reports the deadline it applied: the builder's 0.7 s, not a fixed 15 s
            double applied = Double.parseDouble(after.group(1));
            assertTrue(applied > 0.5 && applied < 0.9, m);
            silent.close();
            acceptor.join();
        } finally {
            synchronized (held) {
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }
}
