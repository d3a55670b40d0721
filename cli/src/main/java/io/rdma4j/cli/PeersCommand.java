package io.rdma4j.cli;

import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.Security;
import java.io.PrintStream;
import java.util.List;

/** {@code ./rdma4j rendezvous peers}: the peers a directory (or a list of them) knows, for operators. */
final class PeersCommand {
    private static final String USAGE = """
            usage: ./rdma4j rendezvous peers --directory HOST:PORT[,HOST:PORT...] [--token T] [--json]
              lists announced peers with their generation, host, handshake address and lanes
            """;

    private PeersCommand() {}

    static int run(String[] args, PrintStream out) {
        String directory = null;
        String token = null;
        boolean json = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--directory", "--token" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(args[i] + " needs a value\n" + USAGE);
                    }
                    if (args[i].equals("--directory")) {
                        directory = args[++i];
                    } else {
                        token = args[++i];
                    }
                }
                case "--help", "-h" -> {
                    out.print(USAGE);
                    return 0;
                }
                default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'\n" + USAGE);
            }
        }
        if (directory == null) {
            throw new IllegalArgumentException("--directory HOST:PORT is required\n" + USAGE);
        }
        List<PeerInfo> peers;
        try (Rendezvous r = Rendezvous.connect(directory, token == null ? Security.none() : Security.token(token))) {
            peers = r.list();
        }
        if (json) {
            StringBuilder b = new StringBuilder("[");
            for (PeerInfo p : peers) {
                b.append(b.length() > 1 ? ",\n " : "\n ")
                        .append("{\"name\":")
                        .append(quote(p.name()))
                        .append(",\"generation\":")
                        .append(p.generation())
                        .append(",\"host\":")
                        .append(quote(p.host()))
                        .append(",\"handshake\":")
                        .append(quote(p.handshakeAddress()))
                        .append(",\"lanes\":")
                        .append(p.lanes().size())
                        .append('}');
            }
            out.println(b.append(peers.isEmpty() ? "]" : "\n]"));
        } else {
            out.printf("%-40s %20s %-24s %-24s %s%n", "NAME", "GENERATION", "HOST", "HANDSHAKE", "LANES");
            for (PeerInfo p : peers) {
                out.printf(
                        "%-40s %20d %-24s %-24s %d%n",
                        p.name(),
                        p.generation(),
                        p.host(),
                        p.handshakeAddress(),
                        p.lanes().size());
            }
            out.println(peers.size() + " peers announced at " + directory);
        }
        out.flush();
        return 0;
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
