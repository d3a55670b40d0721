package io.rdma4j.nvmeof;

/**
 * Where an NVMe-oF controller listens.
 *
 * @param transport how to reach it
 * @param host host name or address
 * @param port TCP port or RDMA-CM port (the NVMe-oF default is 4420)
 */
public record Target(Transport transport, String host, int port) {
    /** The NVMe-oF port assigned by IANA. */
    public static final int DEFAULT_PORT = 4420;

    /** Transports this host speaks. */
    public enum Transport {
        /** NVMe/TCP. */
        TCP,
        /** NVMe/RDMA through RDMA-CM (RoCE, InfiniBand, iWARP, Soft-RoCE). */
        RDMA
    }

    public Target {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException(
                    "target host is empty: give a host name or address, e.g. 192.168.1.10:4420");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(
                    "target port " + port + " is outside 1..65535 (NVMe-oF's default is 4420)");
        }
    }

    /** @return an NVMe/TCP target */
    public static Target tcp(String host, int port) {
        return new Target(Transport.TCP, host, port);
    }

    /** @return an NVMe/RDMA target (an IPv4 address RDMA-CM resolves to a local RDMA device) */
    public static Target rdma(String host, int port) {
        return new Target(Transport.RDMA, host, port);
    }

    /** Parses {@code HOST[:PORT]} as an NVMe/RDMA target; the port defaults to 4420. */
    public static Target parseRdma(String hostPort) {
        Target t = parseTcp(hostPort);
        return rdma(t.host(), t.port());
    }

    /** Parses {@code HOST[:PORT]} or {@code [IPV6]:PORT}; the port defaults to 4420. */
    public static Target parseTcp(String hostPort) {
        String h = hostPort.strip();
        int port = DEFAULT_PORT;
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("'" + hostPort + "': an IPv6 address needs a closing ]");
            }
            String rest = h.substring(close + 1);
            if (rest.startsWith(":")) {
                port = parsePort(rest.substring(1), hostPort);
            } else if (!rest.isEmpty()) {
                throw new IllegalArgumentException("'" + hostPort + "' is not HOST:PORT");
            }
            h = h.substring(1, close);
        } else if (h.indexOf(':') >= 0 && h.indexOf(':') == h.lastIndexOf(':')) {
            port = parsePort(h.substring(h.indexOf(':') + 1), hostPort);
            h = h.substring(0, h.indexOf(':'));
        }
        return tcp(h, port);
    }

    private static int parsePort(String p, String whole) {
        try {
            return Integer.parseInt(p);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "'" + whole + "': port '" + p + "' is not a number (expected HOST:PORT, e.g. 10.0.0.2:4420)");
        }
    }

    @Override
    public String toString() {
        return transport.name().toLowerCase(java.util.Locale.ROOT) + "://"
                + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
