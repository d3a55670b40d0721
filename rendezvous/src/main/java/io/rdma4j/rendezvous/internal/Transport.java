package io.rdma4j.rendezvous.internal;

import io.grpc.BindableService;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.rdma4j.Rdma4jException;
import io.rdma4j.rendezvous.Security;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;

/** Servers and channels with the contract's limits, bearer-token checks and optional (mutual) TLS. */
public final class Transport {
    /** Prefix of in-process targets: {@code inproc:NAME}. */
    public static final String IN_PROCESS_PREFIX = "inproc:";

    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final int MAX_METADATA_BYTES = 16 * 1024;

    private Transport() {}

    /**
     * Where and how a server listens.
     *
     * @param inProcessName non-null for an in-process server (then bindAddress and port are ignored)
     * @param bindAddress address to bind; {@code null}: loopback without a token, all interfaces with one
     * @param port TCP port, 0 for an ephemeral one
     * @param advertiseHost the host others should dial when the server binds all interfaces; {@code null}: this
     *     machine's host name
     */
    public record Listen(String inProcessName, String bindAddress, int port, String advertiseHost) {}

    /** A started server and the target clients use to reach it. */
    public record Started(Server server, String target, boolean loopbackOnly, String description) {}

    /**
     * Starts a server for {@code services}. Without a token the server refuses to listen beyond loopback.
     *
     * @throws IllegalArgumentException for a non-loopback bind without a token, or a bad address
     * @throws Rdma4jException when the port cannot be bound
     */
    public static Started start(Listen listen, Security security, BindableService... services) {
        ServerInterceptor auth = security.token() == null ? null : new BearerTokenCheck(security.token());
        ServerInterceptor names = new CertificateNames.Capture();
        if (listen.inProcessName() != null) {
            InProcessServerBuilder b = InProcessServerBuilder.forName(listen.inProcessName())
                    .maxInboundMessageSize(Validation.MAX_MESSAGE_BYTES)
                    .maxInboundMetadataSize(MAX_METADATA_BYTES);
            for (BindableService s : services) {
                b.addService(intercept(s, auth, names));
            }
            try {
                Server server = b.build().start();
                return new Started(
                        server,
                        IN_PROCESS_PREFIX + listen.inProcessName(),
                        true,
                        "in-process '" + listen.inProcessName() + "'");
            } catch (IOException e) {
                throw new Rdma4jException(
                        "cannot start in-process server '" + listen.inProcessName() + "' (name taken?): "
                                + e.getMessage(),
                        e);
            }
        }
        if (listen.port() < 0 || listen.port() > 65535) {
            throw new IllegalArgumentException("port must be 0..65535, got " + listen.port());
        }
        InetAddress bind;
        try {
            if (listen.bindAddress() != null) {
                bind = InetAddress.getByName(listen.bindAddress());
            } else {
                bind = security.token() == null ? InetAddress.getLoopbackAddress() : InetAddress.getByName("0.0.0.0");
            }
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(
                    "cannot resolve bind address '" + listen.bindAddress() + "': " + e.getMessage(), e);
        }
        if (security.token() == null && !bind.isLoopbackAddress()) {
            throw new IllegalArgumentException(
                    "refusing to listen on " + bind.getHostAddress()
                            + " without a token: anyone who can reach it could read buffer keys. Pass --token/--token-file (Security.withToken), or bind to loopback");
        }
        ServerCredentials creds = InsecureServerCredentials.create();
        if (security.serverTls()) {
            try {
                TlsServerCredentials.Builder tls = TlsServerCredentials.newBuilder()
                        .keyManager(
                                security.certificateChain().toFile(),
                                security.privateKey().toFile());
                if (security.trustedCertificates() != null) {
                    tls.trustManager(security.trustedCertificates().toFile())
                            .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
                }
                creds = tls.build();
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException(
                        "cannot load TLS files (" + security.certificateChain() + ", " + security.privateKey() + ", "
                                + security.trustedCertificates() + "): " + e.getMessage()
                                + "; the key must be a PKCS#8 PEM file",
                        e);
            }
        } else if (security.trustedCertificates() != null) {
            throw new IllegalArgumentException(
                    "trusted client certificates (mutual TLS) need a server certificate and key as well");
        }
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(bind, listen.port()), creds)
                .maxInboundMessageSize(Validation.MAX_MESSAGE_BYTES)
                .maxInboundMetadataSize(MAX_METADATA_BYTES)
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true);
        for (BindableService s : services) {
            b.addService(intercept(s, auth, names));
        }
        Server server;
        try {
            server = b.build().start();
        } catch (IOException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            String why = root.getMessage() == null ? root.toString() : root.getMessage();
            throw new Rdma4jException(
                    "cannot listen on " + bind.getHostAddress() + ":" + listen.port() + ": " + why
                            + (why.contains("in use")
                                    ? " (another process holds the port; stop it or pick another with --port)"
                                    : ""),
                    e);
        }
        int port = ((InetSocketAddress) server.getListenSockets().getFirst()).getPort();
        String host = bind.getHostAddress();
        if (bind.isAnyLocalAddress()) {
            // other hosts must be told a name that reaches this one, not the wildcard
            if (listen.advertiseHost() != null) {
                host = listen.advertiseHost();
            } else {
                try {
                    host = InetAddress.getLocalHost().getHostName();
                } catch (UnknownHostException e) {
                    host = InetAddress.getLoopbackAddress().getHostAddress();
                }
            }
        }
        String target = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        String description = bind.getHostAddress() + ":" + port + (bind.isAnyLocalAddress() ? " as " + target : "")
                + (security.serverTls()
                        ? (security.trustedCertificates() != null ? " (mutual TLS" : " (TLS")
                        : " (plaintext")
                + (security.token() == null ? ", no token: loopback only)" : ", bearer token required)");
        return new Started(server, target, bind.isLoopbackAddress(), description);
    }

    private static io.grpc.ServerServiceDefinition intercept(
            BindableService s, ServerInterceptor auth, ServerInterceptor names) {
        io.grpc.ServerServiceDefinition guarded =
                ServerInterceptors.intercept(MalformedRequests.guard(s.bindService()), names);
        // the last interceptor given runs first: the token is checked before anything else looks at the call
        return auth == null ? guarded : ServerInterceptors.intercept(guarded, auth);
    }

    /**
     * A channel to {@code target} ({@code host:port} or {@code inproc:NAME}) that sends {@code security}'s token on
     * every call.
     */
    public static ManagedChannel channel(String target, Security security) {
        ManagedChannel ch;
        if (target.startsWith(IN_PROCESS_PREFIX)) {
            String name = target.substring(IN_PROCESS_PREFIX.length());
            ch = InProcessChannelBuilder.forName(name)
                    .maxInboundMessageSize(Validation.MAX_MESSAGE_BYTES)
                    .intercept(new BearerTokenSend(security.token()))
                    .build();
        } else {
            ChannelCredentials creds = InsecureChannelCredentials.create();
            if (security.clientTls()) {
                try {
                    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
                    if (security.trustedCertificates() != null) {
                        tls.trustManager(security.trustedCertificates().toFile());
                    }
                    if (security.certificateChain() != null) {
                        tls.keyManager(
                                security.certificateChain().toFile(),
                                security.privateKey().toFile());
                    }
                    creds = tls.build();
                } catch (IOException | RuntimeException e) {
                    throw new IllegalArgumentException(
                            "cannot load TLS files (" + security.certificateChain() + ", " + security.privateKey()
                                    + ", " + security.trustedCertificates() + "): " + e.getMessage(),
                            e);
                }
            }
            // keepalive pings notice a dead server under a long watch stream, which has no deadline of its own
            ch = Grpc.newChannelBuilder(target, creds)
                    .maxInboundMessageSize(Validation.MAX_MESSAGE_BYTES)
                    .maxInboundMetadataSize(MAX_METADATA_BYTES)
                    .keepAliveTime(30, TimeUnit.SECONDS)
                    .keepAliveTimeout(10, TimeUnit.SECONDS)
                    .intercept(new BearerTokenSend(security.token()))
                    .build();
        }
        return ch;
    }

    /**
     * Server side: rejects calls without the right {@code authorization: Bearer} header, comparing in constant time.
     */
    static final class BearerTokenCheck implements ServerInterceptor {
        private final byte[] expected;

        BearerTokenCheck(String token) {
            this.expected = ("Bearer " + token).getBytes(StandardCharsets.US_ASCII);
        }

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            String value = headers.get(AUTHORIZATION);
            if (value == null) {
                call.close(
                        Status.UNAUTHENTICATED.withDescription(
                                "missing bearer token: this server requires one (client: Security.token(...) or --token)"),
                        new Metadata());
                return new ServerCall.Listener<>() {};
            }
            if (!MessageDigest.isEqual(value.getBytes(StandardCharsets.US_ASCII), expected)) {
                call.close(Status.UNAUTHENTICATED.withDescription("wrong bearer token"), new Metadata());
                return new ServerCall.Listener<>() {};
            }
            return next.startCall(call, headers);
        }
    }

    /** Client side: adds the bearer token header. */
    static final class BearerTokenSend implements ClientInterceptor {
        private final String header;

        BearerTokenSend(String token) {
            this.header = token == null ? null : "Bearer " + token;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    if (header != null) {
                        headers.put(AUTHORIZATION, header);
                    }
                    super.start(listener, headers);
                }
            };
        }
    }
}
