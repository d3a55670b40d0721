package io.rdma4j.rendezvous.internal;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Binds peer names to mutual-TLS client certificates. With a shared token every holder could announce any name; with
 * this on, a caller may only act under a name its certificate carries: the subject CN or a DNS subject alternative
 * name, exactly or followed by {@code /suffix} (so one host certificate covers {@code host-1/engine-0},
 * {@code host-1/engine-1}).
 */
public final class CertificateNames {
    /** The caller's certificate names; empty when the call carried no verified client certificate. */
    static final Context.Key<Set<String>> NAMES = Context.key("rdma4j-certificate-names");

    private CertificateNames() {}

    /** Reads the verified client certificate of each call into {@link #NAMES}. */
    static final class Capture implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            Set<String> names = Set.of();
            SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
            if (session != null) {
                try {
                    Certificate[] chain = session.getPeerCertificates();
                    if (chain.length > 0 && chain[0] instanceof X509Certificate leaf) {
                        names = namesOf(leaf);
                    }
                } catch (SSLPeerUnverifiedException e) {
                    names = Set.of();
                }
            }
            return Contexts.interceptCall(Context.current().withValue(NAMES, names), call, headers, next);
        }
    }

    static Set<String> namesOf(X509Certificate cert) {
        Set<String> out = new TreeSet<>();
        try {
            for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    out.add(rdn.getValue().toString());
                }
            }
        } catch (InvalidNameException e) {
            // no usable subject; SANs may still name the peer
        }
        try {
            Collection<List<?>> sans = cert.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (san.size() == 2 && Integer.valueOf(2).equals(san.get(0))) {
                        out.add(san.get(1).toString());
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // unparseable SAN extension: only the CN counts
        }
        return Set.copyOf(out);
    }

    /**
     * Checks that the current call's certificate covers {@code name}.
     *
     * @throws io.grpc.StatusRuntimeException PERMISSION_DENIED when it does not
     */
    static void require(String what, String name) {
        Set<String> names = NAMES.get();
        if (names != null) {
            for (String n : names) {
                if (name.equals(n) || name.startsWith(n + "/")) {
                    return;
                }
            }
        }
        throw Status.PERMISSION_DENIED
                .withDescription(what + " '" + name + "' is not covered by the caller's client certificate (names: "
                        + (names == null || names.isEmpty() ? "none" : new TreeSet<>(names))
                        + "): name the peer after its certificate's CN or DNS name, "
                        + "optionally followed by /suffix")
                .asRuntimeException();
    }
}
