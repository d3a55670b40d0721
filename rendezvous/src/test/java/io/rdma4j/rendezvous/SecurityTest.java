package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.LEASE;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tokens, loopback-only defaults, TLS and mutual TLS, over real loopback TCP. */
class SecurityTest {
    private static final String TOKEN = "s3cret-token_for.tests";

    @TempDir
    static Path dir;

    private static TestCertificates certs;

    @BeforeAll
    static void certificates() throws Exception {
        certs = TestCertificates.generate(dir);
    }

    private static Status.Code code(Runnable r) {
        RendezvousException e = assertThrows(RendezvousException.class, r::run);
        return e.code();
    }

    @Test
    void rejectsMissingAndWrongTokensOnEveryCall() {
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(Security.token(TOKEN))
                        .start();
                Rendezvous none = Fixtures.client(server.target(), (String) null);
                Rendezvous wrong = Fixtures.client(server.target(), TOKEN + "x");
                Rendezvous almost = Fixtures.client(server.target(), TOKEN.substring(0, TOKEN.length() - 1) + "X");
                Rendezvous right = Fixtures.client(server.target(), TOKEN)) {
            assertTrue(server.description().contains("bearer token required"), server.description());
            RendezvousException missing = assertThrows(RendezvousException.class, () -> none.resolve("anyone"));
            assertEquals(Status.Code.UNAUTHENTICATED, missing.code());
            assertTrue(missing.getMessage().contains("missing bearer token"), missing.getMessage());
            assertEquals(Status.Code.UNAUTHENTICATED, code(() -> none.announce(peer("sneaky", 1), LEASE)));
            assertEquals(Status.Code.UNAUTHENTICATED, code(() -> none.list()));
            assertEquals(Status.Code.UNAUTHENTICATED, code(() -> wrong.resolve("anyone")));
            assertEquals(Status.Code.UNAUTHENTICATED, code(() -> almost.lookup("anything")));
            try (Announcement a = right.announce(peer("legit", 1), LEASE)) {
                assertEquals(Optional.of(peer("legit", 1)), right.resolve("legit"));
                assertEquals(Status.Code.UNAUTHENTICATED, code(() -> wrong.resolve("legit")));
            }
        }
    }

    @Test
    void watchWithoutTokenEndsUnauthenticated() throws Exception {
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(Security.token(TOKEN))
                        .start();
                Rendezvous none = Fixtures.client(server.target(), (String) null)) {
            var errors = new java.util.concurrent.LinkedBlockingQueue<RendezvousException>();
            try (Rendezvous.Watch w = none.watch(e -> {}, errors::add)) {
                assertEquals(Status.Code.UNAUTHENTICATED, Fixtures.next(errors).code());
            }
        }
    }

    @Test
    void withoutATokenListensOnLoopbackOnlyAndSaysSo() {
        try (DirectoryServer server = DirectoryServer.builder().start()) {
            assertTrue(server.loopbackOnly());
            assertTrue(server.description().contains("no token: loopback only"), server.description());
            assertTrue(server.target().startsWith("127.0.0.1:"), server.target());
        }
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> DirectoryServer.builder().bindAddress("0.0.0.0").start());
        assertTrue(e.getMessage().contains("without a token"), e.getMessage());
    }

    @Test
    void readsTheTokenFromAFile() throws IOException {
        Path f = dir.resolve("token");
        Files.writeString(f, TOKEN + "\n");
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(Security.none().withTokenFile(f))
                        .start();
                Rendezvous r = Fixtures.client(server.target(), Security.none().withTokenFile(f))) {
            assertTrue(r.list().isEmpty());
        }
        Files.writeString(f, "has space\n");
        assertThrows(IllegalArgumentException.class, () -> Security.none().withTokenFile(f));
    }

    @Test
    void aDirectoryThatIsDownFailsFastAndSaysWhatToDo() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (Rendezvous r = Fixtures.client("127.0.0.1:" + port, TOKEN)) {
            RendezvousException e = assertThrows(RendezvousException.class, () -> r.resolve("x"));
            assertEquals(Status.Code.UNAVAILABLE, e.code(), "a refused connection must not wait for the deadline");
            assertTrue(e.getMessage().contains("./rdma4j rendezvous"), e.getMessage());
            assertEquals(Status.Code.UNAVAILABLE, code(() -> r.announce(peer("p", 1), LEASE)));
        }
    }

    @Test
    void servesTlsToClientsThatTrustItsCa() {
        Security serverSec = Security.token(TOKEN).withCertificate(certs.serverCert(), certs.serverKey());
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(serverSec)
                        .start();
                Rendezvous tls =
                        Fixtures.client(server.target(), Security.token(TOKEN).withTrustedCertificates(certs.ca()));
                Rendezvous plain = Fixtures.client(server.target(), Security.token(TOKEN));
                Rendezvous distrustful = Fixtures.client(
                        server.target(), Security.token(TOKEN).withTrustedCertificates(certs.otherCa()));
                Rendezvous tokenless =
                        Fixtures.client(server.target(), Security.none().withTrustedCertificates(certs.ca()))) {
            assertTrue(server.description().contains("(TLS"), server.description());
            try (Announcement a = tls.announce(peer("over-tls", 2), LEASE)) {
                assertEquals(peer("over-tls", 2), tls.resolve("over-tls").orElseThrow());
            }
            assertEquals(Status.Code.UNAVAILABLE, code(() -> plain.list()));
            assertEquals(Status.Code.UNAVAILABLE, code(() -> distrustful.list()));
            assertEquals(Status.Code.UNAUTHENTICATED, code(() -> tokenless.list()));
        }
    }

    @Test
    void mutualTlsRequiresAClientCertificateSignedByTheTrustedCa() {
        Security serverSec = Security.token(TOKEN)
                .withCertificate(certs.serverCert(), certs.serverKey())
                .withTrustedCertificates(certs.ca());
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(serverSec)
                        .start();
                Rendezvous withCert = Fixtures.client(
                        server.target(),
                        Security.token(TOKEN)
                                .withTrustedCertificates(certs.ca())
                                .withCertificate(certs.clientCert(), certs.clientKey()));
                Rendezvous withoutCert =
                        Fixtures.client(server.target(), Security.token(TOKEN).withTrustedCertificates(certs.ca()));
                Rendezvous stranger = Fixtures.client(
                        server.target(),
                        Security.token(TOKEN)
                                .withTrustedCertificates(certs.ca())
                                .withCertificate(certs.strangerCert(), certs.strangerKey()))) {
            assertTrue(server.description().contains("mutual TLS"), server.description());
            assertEquals(List.of(), withCert.list());
            assertTrue(List.of(Status.Code.UNAVAILABLE, Status.Code.UNKNOWN).contains(code(() -> withoutCert.list())));
            assertTrue(List.of(Status.Code.UNAVAILABLE, Status.Code.UNKNOWN).contains(code(() -> stranger.list())));
        }
    }

    @Test
    void handshakeServesOverMutualTls() {
        Security serverSec = Security.token(TOKEN)
                .withCertificate(certs.serverCert(), certs.serverKey())
                .withTrustedCertificates(certs.ca());
        Security clientSec = Security.token(TOKEN)
                .withTrustedCertificates(certs.ca())
                .withCertificate(certs.clientCert(), certs.clientKey());
        HandshakeTest.RecordingHandler handler = new HandshakeTest.RecordingHandler();
        try (HandshakeServer hs = HandshakeServer.builder("responder", 7, handler)
                        .bindAddress("127.0.0.1")
                        .security(serverSec)
                        .start();
                HandshakeClient c = Fixtures.handshakeClient(hs.address(), clientSec)) {
            HandshakeResult r = c.connect("initiator", 1, "responder", List.of(Fixtures.ibverbsLane(0, 500)));
            assertEquals(1, r.lanes().size());
            assertEquals(7, r.responderGeneration());
        }
    }

    @Test
    void certificateBoundNamesStopTokenHoldersImpersonatingPeers() {
        Security serverSec = Security.token(TOKEN)
                .withCertificate(certs.serverCert(), certs.serverKey())
                .withTrustedCertificates(certs.ca());
        Security clientSec = Security.token(TOKEN)
                .withTrustedCertificates(certs.ca())
                .withCertificate(certs.clientCert(), certs.clientKey());
        try (DirectoryServer server = DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(serverSec)
                        .bindNamesToCertificates()
                        .start();
                Rendezvous r = Fixtures.client(server.target(), clientSec)) {
            try (Announcement own = r.announce(peer("rdma4j-test-client/engine-0", 1), LEASE)) {
                assertTrue(r.resolve("rdma4j-test-client/engine-0").isPresent());
            }
            RendezvousException e =
                    assertThrows(RendezvousException.class, () -> r.announce(peer("trainer-7", 1), LEASE));
            assertEquals(Status.Code.PERMISSION_DENIED, e.code());
            assertTrue(e.getMessage().contains("[rdma4j-test-client]"), e.getMessage());
            assertEquals(
                    Status.Code.PERMISSION_DENIED, code(() -> r.announce(peer("rdma4j-test-client-evil", 1), LEASE)));
        }
        HandshakeTest.RecordingHandler handler = new HandshakeTest.RecordingHandler();
        try (HandshakeServer hs = HandshakeServer.builder("responder", 7, handler)
                        .bindAddress("127.0.0.1")
                        .security(serverSec)
                        .bindNamesToCertificates()
                        .start();
                HandshakeClient c = Fixtures.handshakeClient(hs.address(), clientSec)) {
            assertEquals(
                    1,
                    c.connect("rdma4j-test-client", 1, "responder", List.of(Fixtures.fabricLane(0)))
                            .lanes()
                            .size());
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(() -> c.connect("impostor", 1, "responder", List.of(Fixtures.fabricLane(0)))));
            assertEquals(1, handler.connects.get());
        }
        IllegalArgumentException notMutual = assertThrows(
                IllegalArgumentException.class,
                () -> DirectoryServer.builder()
                        .bindAddress("127.0.0.1")
                        .security(Security.token(TOKEN))
                        .bindNamesToCertificates()
                        .start());
        assertTrue(notMutual.getMessage().contains("needs mutual TLS"), notMutual.getMessage());
    }
}
