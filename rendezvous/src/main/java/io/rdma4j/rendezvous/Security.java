package io.rdma4j.rendezvous;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How a rendezvous endpoint authenticates, for servers and clients alike. Immutable; start from {@link #none()} or
 * {@link #token(String)} and add TLS with the {@code with*} methods.
 *
 * <ul>
 *   <li>token: a shared bearer token; servers check it on every call (constant time), clients send it.
 *   <li>certificate + private key (PEM, PKCS#8 key): a server's TLS identity; a client's certificate for mutual TLS.
 *   <li>trusted certificates (PEM): on a client, the CA that signed the server (turns TLS on); on a server, the CA that
 *       must have signed every client's certificate (mutual TLS, required).
 * </ul>
 */
public final class Security {
    private static final int MAX_TOKEN_CHARS = 4096;
    private static final Security NONE = new Security(null, null, null, null);

    private final String token;
    private final Path certificateChain;
    private final Path privateKey;
    private final Path trustedCertificates;

    private Security(String token, Path certificateChain, Path privateKey, Path trustedCertificates) {
        this.token = token;
        this.certificateChain = certificateChain;
        this.privateKey = privateKey;
        this.trustedCertificates = trustedCertificates;
    }

    /** No token, no TLS: servers then listen on loopback only. */
    public static Security none() {
        return NONE;
    }

    /** A shared bearer token, without TLS. */
    public static Security token(String token) {
        return NONE.withToken(token);
    }

    /** @return a copy using {@code token} (printable ASCII, 1..4096 characters) */
    public Security withToken(String token) {
        return new Security(checkToken(token, "token"), certificateChain, privateKey, trustedCertificates);
    }

    /** @return a copy using the token in {@code file} (its first line, surrounding whitespace removed) */
    public Security withTokenFile(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read token file " + file + ": " + e.getMessage(), e);
        }
        String line = text.lines().findFirst().orElse("").strip();
        return new Security(checkToken(line, "token file " + file), certificateChain, privateKey, trustedCertificates);
    }

    /** @return a copy with this side's TLS certificate chain and PKCS#8 private key (PEM files) */
    public Security withCertificate(Path chainPem, Path privateKeyPem) {
        return new Security(
                token,
                readable(chainPem, "certificate chain"),
                readable(privateKeyPem, "private key"),
                trustedCertificates);
    }

    /**
     * @return a copy trusting the CA certificates in {@code caPem}: clients verify the server with them; servers
     *     require client certificates signed by them
     */
    public Security withTrustedCertificates(Path caPem) {
        return new Security(token, certificateChain, privateKey, readable(caPem, "trusted certificates"));
    }

    private static String checkToken(String token, String what) {
        if (token == null || token.isEmpty() || token.length() > MAX_TOKEN_CHARS) {
            throw new IllegalArgumentException(what + ": a token must be 1.." + MAX_TOKEN_CHARS + " characters");
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                throw new IllegalArgumentException(what
                        + ": a token must be printable ASCII without spaces (it travels in an HTTP/2 header); character "
                        + i + " is 0x" + Integer.toHexString(c));
            }
        }
        return token;
    }

    private static Path readable(Path p, String what) {
        if (p == null || !Files.isReadable(p)) {
            throw new IllegalArgumentException(what + " file " + p + " is missing or unreadable");
        }
        return p;
    }

    /** @return the bearer token, or {@code null} */
    public String token() {
        return token;
    }

    public Path certificateChain() {
        return certificateChain;
    }

    public Path privateKey() {
        return privateKey;
    }

    public Path trustedCertificates() {
        return trustedCertificates;
    }

    /** @return whether a server with this configuration serves TLS (it has a certificate) */
    public boolean serverTls() {
        return certificateChain != null;
    }

    /** @return whether a client with this configuration speaks TLS (it trusts a CA or presents a certificate) */
    public boolean clientTls() {
        return trustedCertificates != null || certificateChain != null;
    }

    @Override
    public String toString() {
        return "Security[token=" + (token == null ? "none" : "set") + ", certificate=" + certificateChain + ", trusted="
                + trustedCertificates + "]";
    }
}
