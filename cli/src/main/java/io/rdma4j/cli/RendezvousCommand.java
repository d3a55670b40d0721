package io.rdma4j.cli;

import io.rdma4j.Closeables;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.Security;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * {@code ./rdma4j rendezvous}: a standalone {@code rdma4j.v1.Directory} for a cluster. Runs until killed. Without a
 * token it listens on loopback only.
 */
final class RendezvousCommand implements Command {
    private static final String USAGE = """
            usage: ./rdma4j rendezvous [--port 7777] [--token T | --token-file F] [--bind ADDR]
                                      [--tls-cert CERT.pem --tls-key KEY.pem [--tls-client-ca CA.pem [--cert-names]]]
                                      [--etcd http://HOST:2379[,http://HOST:2379...][/CLUSTER]] [--metrics-port P]
                   ./rdma4j rendezvous peers --directory HOST:PORT[,HOST:PORT...] [--token T] [--json]
              --port N            TCP port (default 7777; 0 picks a free one)
              --etcd URLS         keep the state in etcd instead of this process: run any number of directories on
                                  the same etcd, stateless, and give engines all of them (--rendezvous A,B,C)
              --token T           bearer token every client must send (visible in ps: prefer --token-file)
              --token-file F      read the token from the first line of F
              --bind ADDR         address to listen on (default: all interfaces with a token, loopback without)
              --tls-cert/--tls-key  serve TLS with this certificate chain and PKCS#8 key (PEM)
              --tls-client-ca CA  require client certificates signed by CA (mutual TLS)
              --cert-names        peers may only announce names their client certificate carries
                                  (CN or DNS name[/suffix])
              --metrics-port P    serve the directory's meters (resolves, leases) for Prometheus at
                                  http://127.0.0.1:P/metrics (0 picks a free port)
            """;

    @Override
    public String name() {
        return "rendezvous";
    }

    @Override
    public String summary() {
        return "run a standalone rendezvous directory (--port 7777 --token-file F)";
    }

    @Override
    public int run(String[] args) throws Exception {
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                System.out.print(USAGE);
                return 0;
            }
        }
        if (args.length > 0 && args[0].equals("peers")) {
            return PeersCommand.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out);
        }
        Running running = start(args, System.out);
        Runtime.getRuntime().addShutdownHook(new Thread(running::close, "rdma4j-rendezvous-shutdown"));
        running.server().awaitTermination();
        return 0;
    }

    /**
     * The directory and, with {@code --metrics-port}, the endpoint serving its meters; closing closes both.
     *
     * @param metrics null without {@code --metrics-port}
     */
    record Running(DirectoryServer server, MetricsEndpoint metrics) implements AutoCloseable {
        @Override
        public void close() {
            Closeables.closeAll(server, metrics);
        }
    }

    /** Parses {@code args}, starts the directory and says where it listens. */
    static Running start(String[] args, PrintStream out) {
        int port = 7777;
        String bind = null;
        Security security = Security.none();
        String cert = null;
        String key = null;
        String clientCa = null;
        boolean tokenGiven = false;
        boolean certNames = false;
        String etcd = null;
        Integer metricsPort = null;
        for (int i = 0; i < args.length; i++) {
            String opt = args[i];
            if (opt.equals("--cert-names")) {
                certNames = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(
                        opt.startsWith("--")
                                ? opt + " needs a value\n" + USAGE
                                : "unexpected argument '" + opt + "'\n" + USAGE);
            }
            String v = args[++i];
            switch (opt) {
                case "--port" -> {
                    try {
                        port = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--port needs a number 0..65535, got '" + v + "'");
                    }
                }
                case "--bind" -> bind = v;
                case "--token", "--token-file" -> {
                    if (tokenGiven) {
                        throw new IllegalArgumentException("give one of --token and --token-file, once");
                    }
                    tokenGiven = true;
                    security = opt.equals("--token") ? security.withToken(v) : security.withTokenFile(Path.of(v));
                }
                case "--tls-cert" -> cert = v;
                case "--tls-key" -> key = v;
                case "--tls-client-ca" -> clientCa = v;
                case "--etcd" -> etcd = v.startsWith("etcd://") || v.startsWith("http://") ? v : "etcd://" + v;
                case "--metrics-port" -> metricsPort = MetricsEndpoint.port(v);
                default -> throw new IllegalArgumentException("unknown option '" + opt + "'\n" + USAGE);
            }
        }
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together");
        }
        if (clientCa != null && cert == null) {
            throw new IllegalArgumentException("--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key as well");
        }
        if (cert != null) {
            security = security.withCertificate(Path.of(cert), Path.of(key));
        }
        if (clientCa != null) {
            security = security.withTrustedCertificates(Path.of(clientCa));
        }
        DirectoryServer.Builder builder =
                DirectoryServer.builder().port(port).bindAddress(bind).security(security);
        if (certNames) {
            builder.bindNamesToCertificates();
        }
        if (etcd != null) {
            builder.store(etcd);
        }
        MetricsEndpoint metrics =
                metricsPort == null ? null : MetricsEndpoint.start(metricsPort, "rdma4j rendezvous", out);
        DirectoryServer server;
        try {
            server = builder.meterRegistry(metrics == null ? null : metrics.registry())
                    .start();
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(e, metrics);
        }
        out.println("rdma4j rendezvous: directory (rdma4j.v1.Directory) listening on " + server.description()
                + ", state " + server.storeDescription());
        if (!tokenGiven) {
            out.println(
                    "rdma4j rendezvous: no token given, so only this machine can connect; pass --token-file F to serve other hosts");
        } else if (cert == null && !server.loopbackOnly()) {
            out.println(
                    "rdma4j rendezvous: warning: without --tls-cert the token and buffer keys cross the network in plaintext");
        }
        out.println("rdma4j rendezvous: clients connect with Rendezvous.connect(\"" + server.target()
                + "\", token); stop with Ctrl-C");
        out.flush();
        return new Running(server, metrics);
    }
}
