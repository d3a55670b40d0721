package io.rdma4j.engine;

import io.rdma4j.InvalidArgumentException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What {@link TransferEngine#openVolume} opens: one or more remote namespaces striped (RAID-0) in units of
 * {@link #stripeUnit()} bytes, connected through the NIC nearest {@link #near()}. Immutable; {@code with...} returns a
 * copy.
 *
 * <pre>{@code
 * VolumeSpec spec = VolumeSpec.of("tcp://10.0.0.2:4420/nqn.2026-01.io.example:ckpt/1",
 *                                 "tcp://10.0.0.3:4420/nqn.2026-01.io.example:ckpt/1")
 *         .withStripeUnit(1 << 20).near(MemoryLocation.gpu("0000:1b:00.0"));
 * }</pre>
 *
 * @param namespaces the namespaces, in striping order (at least one, no duplicates)
 * @param stripeUnit bytes of the volume placed on one namespace before the next one's turn; a power of two of at least
 *     4 KiB and a multiple of every namespace's block size (checked when opened)
 * @param near the memory the volume will mostly serve: NICs are ranked for it
 * @param sourceAddress a local address to leave by for every namespace, overriding the NIC choice; null to choose
 * @param options settings for the block-store provider (NVMe-oF: {@code ioQueues}, {@code queueDepth},
 *     {@code keepAliveMs}, {@code connectTimeoutMs}, {@code ioTimeoutMs}, {@code headerDigest}, {@code dataDigest},
 *     {@code identityDir})
 */
public record VolumeSpec(
        List<Namespace> namespaces,
        long stripeUnit,
        MemoryLocation near,
        InetAddress sourceAddress,
        Map<String, String> options) {
    /** The default stripe unit, 1 MiB. */
    public static final long DEFAULT_STRIPE_UNIT = 1 << 20;

    /**
     * Checks the namespaces and the stripe unit, and copies the lists.
     *
     * @throws io.rdma4j.InvalidArgumentException when there is no namespace, one is listed twice, or the stripe unit is
     *     not a power of two from 4 KiB to 1 GiB
     */
    public VolumeSpec {
        Objects.requireNonNull(namespaces, "namespaces");
        if (namespaces.isEmpty()) {
            throw new InvalidArgumentException("a volume needs at least one namespace, e.g. tcp://10.0.0.2:4420/NQN/1");
        }
        namespaces = List.copyOf(namespaces);
        for (int i = 0; i < namespaces.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (namespaces.get(i).equals(namespaces.get(j))) {
                    throw new InvalidArgumentException("namespace " + namespaces.get(i)
                            + " is listed twice: a volume stripes over distinct namespaces");
                }
            }
        }
        if (stripeUnit < 4096 || stripeUnit > (1L << 30) || Long.bitCount(stripeUnit) != 1) {
            throw new InvalidArgumentException(
                    "stripe unit " + stripeUnit + " must be a power of two from 4 KiB to 1 GiB (default 1 MiB)");
        }
        Objects.requireNonNull(near, "near: pass MemoryLocation.HOST when unknown");
        options = Map.copyOf(Objects.requireNonNull(options, "options"));
    }

    /**
     * {@return a spec of the namespaces given as {@code TRANSPORT://HOST:PORT/NQN/NSID}, 1 MiB stripes, host memory}
     *
     * @param namespaces the namespaces, in striping order
     * @throws io.rdma4j.InvalidArgumentException when a namespace does not parse (see {@link Namespace#parse}) or the
     *     list is empty or repeats one
     */
    public static VolumeSpec of(String... namespaces) {
        List<Namespace> list = new ArrayList<>();
        for (String s : namespaces) {
            list.add(Namespace.parse(s));
        }
        return new VolumeSpec(list, DEFAULT_STRIPE_UNIT, MemoryLocation.HOST, null, Map.of());
    }

    /**
     * {@return a spec of {@code namespaces}, 1 MiB stripes, host memory}
     *
     * @param namespaces the namespaces, in striping order
     * @throws io.rdma4j.InvalidArgumentException when the list is empty or repeats a namespace
     */
    public static VolumeSpec of(List<Namespace> namespaces) {
        return new VolumeSpec(namespaces, DEFAULT_STRIPE_UNIT, MemoryLocation.HOST, null, Map.of());
    }

    /**
     * {@return this spec with a stripe unit of {@code bytes}}
     *
     * @param bytes a power of two from 4 KiB to 1 GiB
     * @throws io.rdma4j.InvalidArgumentException when {@code bytes} is not a power of two from 4 KiB to 1 GiB
     */
    public VolumeSpec withStripeUnit(long bytes) {
        return new VolumeSpec(namespaces, bytes, near, sourceAddress, options);
    }

    /**
     * {@return this spec with NICs ranked for memory at {@code location}}
     *
     * @param location the memory the volume will mostly serve
     */
    public VolumeSpec near(MemoryLocation location) {
        return new VolumeSpec(namespaces, stripeUnit, location, sourceAddress, options);
    }

    /**
     * {@return this spec leaving by {@code address} (a local address of the NIC to use) instead of the chosen NIC}
     *
     * @param address a local address, or {@code null} to choose
     */
    public VolumeSpec withSourceAddress(InetAddress address) {
        return new VolumeSpec(namespaces, stripeUnit, near, address, options);
    }

    /**
     * {@return this spec with one provider option set}
     *
     * @param key the option's name
     * @param value its value
     */
    public VolumeSpec withOption(String key, String value) {
        Map<String, String> m = new HashMap<>(options);
        m.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return new VolumeSpec(namespaces, stripeUnit, near, sourceAddress, m);
    }

    /**
     * One remote namespace.
     *
     * @param transport {@code tcp} or {@code rdma}
     * @param host the target's host name or address
     * @param port its port (NVMe-oF: 4420)
     * @param subsystemNqn the subsystem exporting the namespace
     * @param nsid the namespace ID (1 or more)
     */
    public record Namespace(String transport, String host, int port, String subsystemNqn, long nsid) {
        /**
         * Checks every component and lower-cases the transport.
         *
         * @throws io.rdma4j.InvalidArgumentException when the transport is neither tcp nor rdma, the host is blank, the
         *     port outside 1..65535, the NQN blank or holding a {@code /}, or the ID outside 1..0xfffffffe
         */
        public Namespace {
            Objects.requireNonNull(transport, "transport");
            if (!(transport.equalsIgnoreCase("tcp") || transport.equalsIgnoreCase("rdma"))) {
                throw new InvalidArgumentException("transport '" + transport + "' must be tcp or rdma");
            }
            transport = transport.toLowerCase(Locale.ROOT);
            Objects.requireNonNull(host, "host");
            if (host.isBlank()) {
                throw new InvalidArgumentException("host is empty: give the target's address, e.g. 10.0.0.2");
            }
            if (port < 1 || port > 65535) {
                throw new InvalidArgumentException("port " + port + " is outside 1..65535 (NVMe-oF's default is 4420)");
            }
            Objects.requireNonNull(subsystemNqn, "subsystemNqn");
            if (subsystemNqn.isBlank() || subsystemNqn.indexOf('/') >= 0) {
                throw new InvalidArgumentException(
                        "subsystem NQN '" + subsystemNqn + "' is empty or holds a '/': give the NQN the target"
                                + " exports (./rdma4j nvme discover lists them)");
            }
            if (nsid < 1 || nsid > 0xfffffffeL) {
                throw new InvalidArgumentException(
                        "namespace ID " + nsid + " is outside 1..0xfffffffe: pass the ID the target"
                                + " exports (./rdma4j nvme discover lists them)");
            }
        }

        /**
         * Parses {@code TRANSPORT://HOST[:PORT]/NQN/NSID} ({@code [IPV6]:PORT} for IPv6); the port defaults to 4420.
         *
         * @param s the namespace as text
         * @return the namespace
         * @throws io.rdma4j.InvalidArgumentException when {@code s} is not of that form or a part is out of range
         */
        public static Namespace parse(String s) {
            String form =
                    " (expected TRANSPORT://HOST[:PORT]/NQN/NSID, e.g. tcp://10.0.0.2:4420/nqn.2026-01.io.example:ckpt/1)";
            Objects.requireNonNull(s, "namespace");
            int scheme = s.indexOf("://");
            int slash = scheme < 0 ? -1 : s.indexOf('/', scheme + 3);
            int last = s.lastIndexOf('/');
            if (scheme < 0 || slash < 0 || last <= slash) {
                throw new InvalidArgumentException("'" + s + "' is not a namespace" + form);
            }
            String authority = s.substring(scheme + 3, slash);
            String host = authority;
            int port = 4420;
            try {
                if (authority.startsWith("[")) {
                    int close = authority.indexOf(']');
                    if (close < 0) {
                        throw new InvalidArgumentException("'" + s + "': an IPv6 address needs a closing ]" + form);
                    }
                    host = authority.substring(1, close);
                    if (authority.length() > close + 1) {
                        port = Integer.parseInt(authority.substring(close + 2));
                    }
                } else if (authority.indexOf(':') >= 0) {
                    host = authority.substring(0, authority.indexOf(':'));
                    port = Integer.parseInt(authority.substring(authority.indexOf(':') + 1));
                }
                return new Namespace(
                        s.substring(0, scheme),
                        host,
                        port,
                        s.substring(slash + 1, last),
                        Long.parseLong(s.substring(last + 1)));
            } catch (NumberFormatException e) {
                throw new InvalidArgumentException("'" + s + "': port or namespace ID is not a number" + form);
            }
        }

        @Override
        public String toString() {
            return transport + "://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port + "/"
                    + subsystemNqn + "/" + nsid;
        }
    }
}
