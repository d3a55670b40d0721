package io.rdma4j.engine.spi;

import java.util.Locale;

/**
 * A storage controller to connect to.
 *
 * @param transport {@code tcp} or {@code rdma} (lower case)
 * @param host host name or address
 * @param port port (NVMe-oF: 4420)
 * @param subsystemNqn subsystem to attach to
 */
public record BlockTarget(String transport, String host, int port, String subsystemNqn) {
    public BlockTarget {
        if (transport == null || transport.isBlank()) {
            throw new IllegalArgumentException("transport is empty: give tcp or rdma");
        }
        transport = transport.toLowerCase(Locale.ROOT);
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("host is empty: give the target's address, e.g. 10.0.0.2");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is outside 1..65535 (NVMe-oF's default is 4420)");
        }
        if (subsystemNqn == null || subsystemNqn.isBlank()) {
            throw new IllegalArgumentException(
                    "subsystem NQN is empty: give the NQN the target exports (./rdma4j nvme discover lists them)");
        }
    }

    @Override
    public String toString() {
        return transport + "://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port + "/" + subsystemNqn;
    }
}
