package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.RendezvousException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RendezvousCommandTest {
    @TempDir
    Path dir;

    @Test
    void servesOnTheGivenPortWithATokenFileAndSaysWhere() throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "cli-token\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DirectoryServer server = RendezvousCommand.start(
                        new String[] {"--port", "0", "--bind", "127.0.0.1", "--token-file", token.toString()},
                        new PrintStream(out, true, StandardCharsets.UTF_8))
                .server()) {
            String said = out.toString(StandardCharsets.UTF_8);
            assertTrue(
                    said.contains("listening on 127.0.0.1:" + server.port() + " (plaintext, bearer token required)"),
                    said);
            try (Rendezvous r = Rendezvous.connect(server.target(), "cli-token");
                    var a = r.announce(new PeerInfo("cli-peer", "", "h", 1, List.of()), Duration.ofSeconds(30))) {
                assertEquals("cli-peer", r.resolve("cli-peer").orElseThrow().name());
            }
            try (Rendezvous wrong = Rendezvous.connect(server.target(), "other")) {
                assertEquals(
                        io.grpc.Status.Code.UNAUTHENTICATED,
                        assertThrows(RendezvousException.class, wrong::list).code());
            }
        }
    }

    @Test
    void peersListsGenerationLeaseAndBuffersAsTextAndJson() throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try (DirectoryServer server = RendezvousCommand.start(
                                new String[] {"--port", "0"}, new PrintStream(log, true, StandardCharsets.UTF_8))
                        .server();
                Rendezvous r = Rendezvous.connect(server.target(), io.rdma4j.rendezvous.Security.none());
                var a = r.announce(
                        new PeerInfo(
                                "peers-cli",
                                "",
                                "h",
                                7,
                                List.of(io.rdma4j.rendezvous.LaneInfo.libfabric(
                                        0, "tcp;ofi_rxm", "lo", null, -1, new byte[] {2, 0, 0x1f, 0x40, 127, 0, 0, 1
                                        }))),
                        Duration.ofSeconds(30))) {
            a.publish(io.rdma4j.rendezvous.BufferInfo.of(
                    "peers-cli-buf",
                    4096,
                    io.rdma4j.rendezvous.MemoryKind.HOST,
                    io.rdma4j.rendezvous.Locality.host(0),
                    7,
                    List.of(new io.rdma4j.rendezvous.LaneKey(0, 0x7f00_0000L, 7))));
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            assertEquals(
                    0,
                    PeersCommand.run(
                            new String[] {"--directory", server.target()},
                            new PrintStream(text, true, StandardCharsets.UTF_8)));
            String t = text.toString(StandardCharsets.UTF_8);
            assertTrue(t.matches("(?s).*peers-cli\\s+7\\s+\\d+\\.\\d/30 s\\s.*peers-cli-buf\\R.*"), t);
            ByteArrayOutputStream json = new ByteArrayOutputStream();
            assertEquals(
                    0,
                    PeersCommand.run(
                            new String[] {"--directory", server.target(), "--json"},
                            new PrintStream(json, true, StandardCharsets.UTF_8)));
            String j = json.toString(StandardCharsets.UTF_8);
            assertTrue(j.contains("\"name\":\"peers-cli\",\"generation\":7,\"leaseMillis\":30000"), j);
            assertTrue(j.contains("\"buffers\":[\"peers-cli-buf\"]"), j);
        }
    }

    @Test
    void withoutATokenSaysItListensOnLoopbackOnly() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DirectoryServer server = RendezvousCommand.start(
                        new String[] {"--port", "0"}, new PrintStream(out, true, StandardCharsets.UTF_8))
                .server()) {
            assertTrue(server.loopbackOnly());
            assertTrue(
                    out.toString(StandardCharsets.UTF_8).contains("only this machine can connect"),
                    out.toString(StandardCharsets.UTF_8));
        }
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> RendezvousCommand.start(new String[] {"--port", "0", "--bind", "0.0.0.0"}, System.out));
        assertTrue(e.getMessage().contains("without a token"), e.getMessage());
    }

    @Test
    void rejectsBadArgumentsWithTheFix() {
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> RendezvousCommand.start(new String[] {"--port", "x"}, System.out))
                .getMessage()
                .contains("--port needs a number"));
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> RendezvousCommand.start(new String[] {"--tls-cert", "a.pem"}, System.out))
                .getMessage()
                .contains("go together"));
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> RendezvousCommand.start(new String[] {"--frobnicate", "1"}, System.out))
                .getMessage()
                .contains("unknown option"));
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> RendezvousCommand.start(new String[] {"--token"}, System.out))
                .getMessage()
                .contains("needs a value"));
        assertTrue(assertThrows(
                        IllegalArgumentException.class,
                        () -> RendezvousCommand.start(new String[] {"--port", "0", "--cert-names"}, System.out))
                .getMessage()
                .contains("needs mutual TLS"));
        assertTrue(Main.commands().stream().anyMatch(c -> c.name().equals("rendezvous")));
    }
}
