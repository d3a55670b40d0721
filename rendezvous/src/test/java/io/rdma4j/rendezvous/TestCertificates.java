package io.rdma4j.rendezvous;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Throw-away PKI for TLS tests, generated at test time into a temporary directory (never committed): two CAs, a server
 * certificate for localhost/127.0.0.1, a client certificate, and a client certificate from the CA nobody trusts. Keys
 * are PKCS#8 PEM, as gRPC wants them. openssl makes them in milliseconds where it is installed; otherwise the JDK's
 * keytool does (a JVM start per step, so slower), so TLS is tested wherever the build runs.
 */
record TestCertificates(
        Path ca,
        Path serverCert,
        Path serverKey,
        Path clientCert,
        Path clientKey,
        Path otherCa,
        Path strangerCert,
        Path strangerKey) {
    private static final String PASSWORD = "test-only";

    static TestCertificates generate(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        if (opensslAvailable()) {
            withOpenssl(dir);
        } else {
            withKeytool(dir);
        }
        return new TestCertificates(
                dir.resolve("ca.pem"),
                dir.resolve("server.pem"),
                dir.resolve("server.key"),
                dir.resolve("client.pem"),
                dir.resolve("client.key"),
                dir.resolve("other-ca.pem"),
                dir.resolve("stranger.pem"),
                dir.resolve("stranger.key"));
    }

    static boolean opensslAvailable() {
        try {
            return new ProcessBuilder("openssl", "version")
                            .redirectErrorStream(true)
                            .start()
                            .waitFor()
                    == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void withOpenssl(Path dir) throws IOException, InterruptedException {
        Files.writeString(
                dir.resolve("server.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        Files.writeString(
                dir.resolve("client.ext"), "subjectAltName=DNS:rdma4j-test-client\nextendedKeyUsage=clientAuth\n");
        Files.writeString(dir.resolve("stranger.ext"), "subjectAltName=DNS:stranger\nextendedKeyUsage=clientAuth\n");
        for (String ca : List.of("ca", "other-ca")) {
            run(
                    dir,
                    "openssl",
                    "req",
                    "-x509",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-nodes",
                    "-keyout",
                    ca + ".key",
                    "-out",
                    ca + ".pem",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=rdma4j test " + ca);
        }
        for (String[] leaf : List.of(
                new String[] {"server", "localhost", "ca"},
                new String[] {"client", "rdma4j-test-client", "ca"},
                new String[] {"stranger", "stranger", "other-ca"})) {
            String name = leaf[0];
            run(
                    dir,
                    "openssl",
                    "req",
                    "-newkey",
                    "ec",
                    "-pkeyopt",
                    "ec_paramgen_curve:prime256v1",
                    "-nodes",
                    "-keyout",
                    name + ".key",
                    "-out",
                    name + ".csr",
                    "-subj",
                    "/CN=" + leaf[1]);
            run(
                    dir,
                    "openssl",
                    "x509",
                    "-req",
                    "-in",
                    name + ".csr",
                    "-CA",
                    leaf[2] + ".pem",
                    "-CAkey",
                    leaf[2] + ".key",
                    "-CAcreateserial",
                    "-out",
                    name + ".pem",
                    "-days",
                    "2",
                    "-extfile",
                    name + ".ext");
        }
    }

    private static void withKeytool(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        authority(dir, "ca", "rdma4j test CA");
        authority(dir, "other-ca", "rdma4j untrusted test CA");
        leaf(dir, "server", "localhost", "ca", "SAN=dns:localhost,ip:127.0.0.1", "EKU=serverAuth");
        leaf(dir, "client", "rdma4j-test-client", "ca", "SAN=dns:rdma4j-test-client", "EKU=clientAuth");
        leaf(dir, "stranger", "stranger", "other-ca", "SAN=dns:stranger", "EKU=clientAuth");
    }

    private static void authority(Path dir, String name, String cn) throws IOException, InterruptedException {
        keytool(
                dir,
                "-genkeypair",
                "-alias",
                name,
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=" + cn,
                "-ext",
                "bc:c",
                "-validity",
                "2",
                "-keystore",
                name + ".p12",
                "-storetype",
                "PKCS12",
                "-storepass",
                PASSWORD,
                "-keypass",
                PASSWORD);
        keytool(
                dir,
                "-exportcert",
                "-rfc",
                "-alias",
                name,
                "-keystore",
                name + ".p12",
                "-storepass",
                PASSWORD,
                "-file",
                name + ".pem");
    }

    private static void leaf(Path dir, String name, String cn, String issuer, String... extensions)
            throws IOException, InterruptedException, GeneralSecurityException {
        keytool(
                dir,
                "-genkeypair",
                "-alias",
                name,
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=" + cn,
                "-validity",
                "2",
                "-keystore",
                name + ".p12",
                "-storetype",
                "PKCS12",
                "-storepass",
                PASSWORD,
                "-keypass",
                PASSWORD);
        keytool(
                dir,
                "-certreq",
                "-alias",
                name,
                "-keystore",
                name + ".p12",
                "-storepass",
                PASSWORD,
                "-file",
                name + ".csr");
        List<String> sign = new ArrayList<>(List.of(
                "-gencert",
                "-rfc",
                "-alias",
                issuer,
                "-keystore",
                issuer + ".p12",
                "-storepass",
                PASSWORD,
                "-infile",
                name + ".csr",
                "-outfile",
                name + ".pem",
                "-validity",
                "2"));
        for (String e : extensions) {
            sign.add("-ext");
            sign.add(e);
        }
        keytool(dir, sign.toArray(String[]::new));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        Key key = ks.getKey(name, PASSWORD.toCharArray()); // PKCS#8 encoded
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(key.getEncoded()) + "\n-----END PRIVATE KEY-----\n";
        Files.writeString(dir.resolve(name + ".key"), pem);
    }

    private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
        Path java = Path.of(ProcessHandle.current()
                .info()
                .command()
                .orElseThrow(() -> new IOException("cannot tell where this JVM's java is")));
        List<String> cmd = new ArrayList<>();
        cmd.add(java.resolveSibling("keytool").toString());
        cmd.addAll(List.of(args));
        run(dir, cmd.toArray(String[]::new));
    }

    private static void run(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
