package io.rdma4j.libfabric.engine;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.libfabric.FabricException;
import io.rdma4j.libfabric.Hints;
import io.rdma4j.libfabric.Info;
import io.rdma4j.libfabric.InfoList;
import io.rdma4j.libfabric.Libfabric;
import io.rdma4j.topology.NicAttributes;
import io.rdma4j.topology.NicFilter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Opening the backend: which provider ({@code auto}: efa, cxi, verbs, psm3, then shm on the same host, then tcp), which
 * of its domains (the NIC filter; socket providers bound to one interface address), and the lanes on them with their
 * descriptors.
 */
final class ProviderSelection {
    private static final List<String> PREFERENCE = List.of("efa", "cxi", "verbs", "psm3", "shm", "tcp");

    private ProviderSelection() {}

    /** Opens lanes on the configured (or best) provider: {@code lanesPerDevice} endpoints per fabric domain. */
    static LibfabricEngineBackend open(BackendConfig config) {
        Libfabric.ensureAvailable();
        String want = config.provider();
        try (InfoList all =
                Libfabric.getinfo(want == null ? Hints.rdm() : Hints.rdm().provider(want))) {
            List<Info> usable = usable(all);
            if (usable.isEmpty()) {
                throw new BackendUnavailableException(
                        "libfabric offers no RDM provider with RMA, messages and 4 bytes of CQ data"
                                + (want == null ? "" : " for provider '" + want + "'")
                                + ". Libfabric.getinfo(Hints.rdm()) lists the RDM providers here",
                        null);
            }
            String chosen = want != null ? usable.getFirst().provider() : best(usable);
            String source = sourceAddress(config, chosen);
            if (source == null) {
                return open(config, chosen, usable);
            }
            // socket providers report one domain per interface: bind to the one that owns the source address, so an
            // engine never sends over an interface nobody named (loopback unless the user gives an address)
            try (InfoList bound =
                    Libfabric.getinfo(Hints.rdm().provider(chosen.split(";")[0]).sourceAddress(source))) {
                List<Info> local = usable(bound);
                if (local.isEmpty()) {
                    throw new BackendUnavailableException(
                            "libfabric provider " + chosen + " has no usable domain for source address " + source
                                    + ": give the address of a local interface (option sourceAddress or RDMA4J_FI_SOURCE_ADDRESS)",
                            null);
                }
                try {
                    return open(config, chosen, local);
                } catch (FabricException e) {
                    throw new BackendUnavailableException(
                            "libfabric provider " + chosen + " cannot open lanes bound to source address "
                                    + source + " (" + e.getMessage()
                                    + "): give the address of a local interface (option sourceAddress or "
                                    + "RDMA4J_FI_SOURCE_ADDRESS)",
                            e);
                }
            }
        }
    }

    /** Providers that run over the host's IP stack: their lanes bind to one interface address, loopback by default. */
    private static final List<String> SOCKET_PROVIDERS = List.of("tcp", "udp", "sockets");

    /**
     * The address socket providers bind to: {@link io.rdma4j.engine.spi.BackendOptions#sourceAddress()}, else
     * {@code RDMA4J_FI_SOURCE_ADDRESS}, else {@code 127.0.0.1}. Null for NIC providers (efa, verbs, cxi, shm), which
     * have no such choice.
     */
    static String sourceAddress(BackendConfig config, String provider) {
        String core = provider.toLowerCase(Locale.ROOT).split(";")[0];
        if (!SOCKET_PROVIDERS.contains(core)) {
            return null;
        }
        String s = config.options().sourceAddress();
        if (s == null || s.isBlank()) {
            s = System.getenv("RDMA4J_FI_SOURCE_ADDRESS");
        }
        return s == null || s.isBlank() ? "127.0.0.1" : s;
    }

    private static List<Info> usable(InfoList all) {
        List<Info> usable = new ArrayList<>();
        for (Info i : all) {
            if (i.cqDataSize() >= 4 && (i.caps() & Hints.DEFAULT_CAPS) == Hints.DEFAULT_CAPS) {
                usable.add(i);
            }
        }
        return usable;
    }

    /** Builds the lanes; the infos' list must stay open until this returns. */
    private static LibfabricEngineBackend open(BackendConfig config, String chosen, List<Info> usable) {
        // one device per distinct domain (NIC) of the chosen provider, in libfabric's order: the several fabrics
        // tcp reports for one interface (each IPv4/IPv6 address) are the same device
        Map<String, Info> devices = new LinkedHashMap<>();
        for (Info i : usable) {
            if (i.provider().equals(chosen)) {
                devices.putIfAbsent(i.domain(), i);
            }
        }
        NicFilter filter = NicFilter.parse(config.options().nicFilter());
        List<Info> picked = new ArrayList<>();
        for (Info i : devices.values()) {
            if (allowed(filter, i.domain())) {
                picked.add(i);
            }
        }
        if (picked.isEmpty()) {
            throw new BackendUnavailableException(
                    "the NIC filter '" + filter + "' excludes every " + chosen + " domain "
                            + devices.values().stream().map(Info::domain).toList(),
                    null);
        }
        List<LaneDescriptor> descriptors = new ArrayList<>();
        List<FabricLane> lanes = new ArrayList<>();
        long cqData = Long.MAX_VALUE;
        Function<String, NicAttributes> topology = NicAttributes.scanLive();
        try {
            for (Info i : picked) {
                NicAttributes nic = topology.apply(deviceName(i.domain()));
                String pci = nic.pciAddress();
                int numa = nic.numaNode();
                double gbps = nic.rateGbps();
                // max_msg_size SIZE_MAX reads as a negative long: no limit
                for (int k = 0; k < config.lanesPerDevice(); k++) {
                    int index = lanes.size();
                    lanes.add(new FabricLane(index, i));
                    descriptors.add(new LaneDescriptor(
                            index, i.domain(), pci, numa, gbps, i.maxMsgSize() <= 0 ? Long.MAX_VALUE : i.maxMsgSize()));
                    cqData = Math.min(cqData, i.cqDataSize());
                }
            }
        } catch (RuntimeException e) {
            throw Closeables.closeAllInto(
                    e, lanes.stream().map(l -> (AutoCloseable) l::close).toList());
        }
        Info first = picked.getFirst();
        String desc = "libfabric " + Libfabric.versionString() + " " + chosen + " on "
                + picked.stream().map(Info::domain).distinct().toList() + " (mr_mode 0x"
                + Integer.toHexString(first.mrMode()) + ", " + config.lanesPerDevice() + " endpoint(s) per domain)";
        return new LibfabricEngineBackend(
                chosen, desc, List.copyOf(descriptors), lanes.toArray(new FabricLane[0]), cqData);
    }

    private static String best(List<Info> infos) {
        for (String p : PREFERENCE) {
            for (Info i : infos) {
                String core = i.provider().toLowerCase(Locale.ROOT);
                if (core.equals(p) || core.startsWith(p + ";")) {
                    return i.provider();
                }
            }
        }
        return infos.getFirst().provider();
    }

    /**
     * Whether the NIC filter lets domain {@code domain} through: {@link NicFilter}'s rules (NCCL_IB_HCA's prefix,
     * {@code =} exact, {@code ^} exclude, {@code :port}), matched against the domain's device name. A domain counts as
     * port 1 of its device, the port ibverbs uses too, so {@code name:port} entries mean the same in both backends.
     */
    static boolean allowed(NicFilter filter, String domain) {
        return filter.allows(deviceName(domain), 1);
    }

    /** The device behind a domain name: EFA's {@code rdmap0s6-rdm} and {@code -dgrm} domains are device rdmap0s6. */
    static String deviceName(String domain) {
        return domain.endsWith("-rdm") || domain.endsWith("-dgrm")
                ? domain.substring(0, domain.lastIndexOf('-'))
                : domain;
    }
}
