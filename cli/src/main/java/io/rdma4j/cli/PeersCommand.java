package io.rdma4j.cli;

import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.PeerStatus;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.Security;
import java.io.PrintStream;
import java.util.List;

/** {@code ./rdma4j rendezvous peers}: the peers a directory (or a list of them) knows, for operators. */
final class PeersCommand {
    private static final String USAGE = """
            usage: ./rdma4j rendezvous peers --directory HOST:PORT[,HOST:PORT...] [--token T] [--json]
              lists announced peers with their generation, lease (and how much of it is left), host, handshake
              address, lanes and published buffers
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
        List<PeerStatus> peers;
        try (Rendezvous r = Rendezvous.connect(directory, token == null ? Security.none() : Security.token(token))) {
            peers = r.listStatus();
        }
        if (json) {
            StringBuilder b = new StringBuilder("[");
            for (PeerStatus s : peers) {
                PeerInfo p = s.peer();
                b.append(b.length() > 1 ? ",\n " : "\n ")
                        .append("{\"name\":")
                        .append(quote(p.name()))
                        .append(",\"generation\":")
                        .append(p.generation())
                        .append(",\"leaseMillis\":")
                        .append(s.leaseMillis())
                        .append(",\"leaseRemainingMillis\":")
                        .append(s.leaseRemainingMillis())
                        .append(",\"host\":")
                        .append(quote(p.host()))
                        .append(",\"handshake\":")
                        .append(quote(p.handshakeAddress()))
                        .append(",\"lanes\":")
                        .append(p.lanes().size())
                        .append(",\"buffers\":[");
                for (int i = 0; i < s.buffers().size(); i++) {
                    b.append(i > 0 ? "," : "").append(quote(s.buffers().get(i)));
                }
                b.append("]}");
            }
            out.println(b.append(peers.isEmpty() ? "]" : "\n]"));
        } else {
            out.printf(
                    "%-32s %20s %-16s %-20s %-22s %5s %s%n",
                    "NAME", "GENERATION", "LEASE", "HOST", "HANDSHAKE", "LANES", "BUFFERS");
            for (PeerStatus s : peers) {
                PeerInfo p = s.peer();
                String lease = s.leaseRemainingMillis() < 0
                        ? "gone"
                        : String.format("%.1f/%.0f s", s.leaseRemainingMillis() / 1e3, s.leaseMillis() / 1e3);
                out.printf(
                        "%-32s %20d %-16s %-20s %-22s %5d %s%n",
                        p.name(),
                        p.generation(),
                        lease,
                        p.host(),
                        p.handshakeAddress(),
                        p.lanes().size(),
                        s.buffers().isEmpty() ? "-" : String.join(",", s.buffers()));
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
