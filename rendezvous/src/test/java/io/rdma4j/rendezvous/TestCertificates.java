package io.rdma4j.rendezvous;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Throw-away PKI for TLS tests, generated at test time with openssl into a temporary directory (never committed):
 * a CA, a server certificate for localhost/127.0.0.1, and a client certificate, with PKCS#8 keys.
 */
record TestCertificates(Path ca, Path serverCert, Path serverKey, Path clientCert, Path clientKey, Path otherCa, Path strangerCert, Path strangerKey) {

    static boolean opensslAvailable() {
        try {
            return new ProcessBuilder("openssl", "version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static TestCertificates generate(Path dir) throws IOException, InterruptedException {
        Path ext = dir.resolve("server.ext");
        Files.writeString(ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        Path clientExt = dir.resolve("client.ext");
        Files.writeString(clientExt, "extendedKeyUsage=clientAuth\n");
        for (String ca : List.of("ca", "other-ca")) {
            run(dir, "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca + ".key",
                    "-out", ca + ".pem", "-days", "1", "-subj", "/CN=rdma4j test " + ca);
        }
        for (String who : List.of("server", "client")) {
            run(dir, "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", who + ".key",
                    "-out", who + ".csr", "-subj", "/CN=" + (who.equals("server") ? "localhost" : "rdma4j-test-client"));
            run(dir, "openssl", "x509", "-req", "-in", who + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", who + ".pem",
                    "-days", "1", "-extfile", who + ".ext");
        }
        // a client certificate from a CA the servers do not trust
        run(dir, "openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "stranger.key",
                "-out", "stranger.csr", "-subj", "/CN=stranger");
        run(dir, "openssl", "x509", "-req", "-in", "stranger.csr", "-CA", "other-ca.pem", "-CAkey", "other-ca.key", "-CAcreateserial",
                "-out", "stranger.pem", "-days", "1", "-extfile", "client.ext");
        return new TestCertificates(dir.resolve("ca.pem"), dir.resolve("server.pem"), dir.resolve("server.key"), dir.resolve("client.pem"),
                dir.resolve("client.key"), dir.resolve("other-ca.pem"),
                dir.resolve("stranger.pem"), dir.resolve("stranger.key"));
    }

    private static void run(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(new ArrayList<>(List.of(cmd))).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
