package io.rdma4j.topology;

import io.rdma4j.topology.internal.Merge;
import io.rdma4j.topology.internal.Model;
import io.rdma4j.topology.internal.Ranker;
import io.rdma4j.topology.internal.SysfsScanner;
import io.rdma4j.topology.internal.TopologyFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Where every GPU, accelerator, NIC and NVMe drive of a machine sits, and which NICs and drives are closest to a given
 * GPU, accelerator or NUMA node.
 *
 * <pre>{@code
 * Topology t = Topology.scan();                              // this machine, NIC filter from RDMA4J_IB_HCA
 * for (Affinity a : t.affinity()) {
 *     List<Ranked<PciDevice>> lanes = a.bestNics();         // the NICs that tie for closest to this GPU
 * }
 * t.rankNics(Location.parse("numa:1"));                      // for host memory on node 1
 * }</pre>
 *
 * Sources: sysfs under a filesystem root ({@link #scan(Path)}), a vendor topology file in NCCL's or hwloc's XML format
 * ({@link #fromNcclXml(Path)}), or both, the file overriding the structure ({@link Builder#ncclXml(Path)}). Instances
 * are immutable and thread-safe.
 */
public final class Topology {
    /**
     * Environment variable naming a vendor topology file to apply over live scans, as {@code NCCL_TOPO_FILE} does for
     * NCCL; read by {@link #scan()} and by builders that scan {@link Builder#live()} without an explicit file.
     */
    public static final String TOPO_FILE_ENV = "RDMA4J_TOPO_FILE";

    private final Model model;
    private final NicFilter filter;
    private final List<PciDevice> devices;
    private final Map<PciAddress, PciDevice> byAddress;

    private Topology(Model model, NicFilter filter) {
        this.model = model;
        this.filter = filter;
        this.devices = List.copyOf(model.devices.values());
        this.byAddress = Map.copyOf(model.devices);
    }

    /**
     * Scans this machine's {@code /sys}; the NIC filter comes from {@link NicFilter#ENV}, and a vendor file named by
     * {@link #TOPO_FILE_ENV} overrides the scanned structure.
     */
    public static Topology scan() {
        return builder().live().build();
    }

    /**
     * Scans a captured tree.
     *
     * @param fsroot folder holding {@code sys/} (and {@code proc/}), as {@code hwloc-gather-topology} captures unpack
     */
    public static Topology scan(Path fsroot) {
        return builder().fsroot(fsroot).build();
    }

    /**
     * Reads a vendor topology file alone: NCCL's {@code NCCL_TOPO_FILE} format ({@code <system>}) or an hwloc XML
     * export ({@code <topology>}).
     */
    public static Topology fromNcclXml(Path file) {
        return builder().ncclXml(file).build();
    }

    /** @return a builder: choose sources and the NIC filter */
    public static Builder builder() {
        return new Builder();
    }

    /** Chooses the sources and the NIC filter. */
    public static final class Builder {
        private Path fsroot;
        private boolean live;
        private Path xml;
        private String filter;
        private Map<String, String> env = System.getenv();

        private Builder() {}

        /** Scan the running machine's {@code /sys}. */
        public Builder live() {
            this.fsroot = Path.of("/");
            this.live = true;
            return this;
        }

        /** Scan a captured tree whose {@code sys/} and {@code proc/} are under {@code dir}. */
        public Builder fsroot(Path dir) {
            this.fsroot = Objects.requireNonNull(dir, "fsroot");
            this.live = false;
            return this;
        }

        /**
         * A vendor topology file (NCCL or hwloc XML). Alone it is the source; with {@link #live()} or {@link #fsroot}
         * it overrides the scanned structure for the devices and bridges it names.
         */
        public Builder ncclXml(Path file) {
            this.xml = Objects.requireNonNull(file, "file");
            return this;
        }

        /**
         * An include/exclude list in {@code NCCL_IB_HCA} syntax; overrides the environment. Null: use the environment.
         */
        public Builder nicFilter(String spec) {
            this.filter = spec;
            return this;
        }

        /**
         * The environment to read {@link NicFilter#ENV} and {@link #TOPO_FILE_ENV} from (default: the process
         * environment).
         */
        public Builder environment(Map<String, String> env) {
            this.env = Map.copyOf(env);
            return this;
        }

        /**
         * @throws TopologyException when a source cannot be read, naming it and the fix
         * @throws IllegalArgumentException when the NIC filter is malformed
         */
        public Topology build() {
            String spec = filter != null ? filter : env.get(NicFilter.ENV);
            NicFilter f = NicFilter.parse(spec);
            Model m;
            if (fsroot == null && xml == null) {
                fsroot = Path.of("/");
                live = true;
            }
            if (live
                    && xml == null
                    && env.get(TOPO_FILE_ENV) != null
                    && !env.get(TOPO_FILE_ENV).isBlank()) {
                xml = Path.of(env.get(TOPO_FILE_ENV));
            }
            if (fsroot != null) {
                m = SysfsScanner.scan(fsroot, live);
                if (xml != null) {
                    m = Merge.apply(m, TopologyFiles.read(xml));
                }
            } else {
                m = TopologyFiles.read(xml);
            }
            return new Topology(m.completeNvme(), f);
        }
    }

    /** @return the same topology with another NIC filter */
    public Topology withNicFilter(NicFilter filter) {
        return new Topology(model, Objects.requireNonNull(filter, "filter"));
    }

    /**
     * @return what was read: {@code sysfs}, {@code sysfs:/path}, {@code nccl-xml:/file}, {@code hwloc-xml:/file}, or a
     *     {@code +} of two
     */
    public String source() {
        return model.source;
    }

    /** @return every PCI function that is not a bridge, by address */
    public List<PciDevice> devices() {
        return devices;
    }

    /** @return the devices of one kind, by address */
    public List<PciDevice> devices(DeviceKind kind) {
        return devices.stream().filter(d -> d.kind() == kind).toList();
    }

    /** @return GPUs and accelerators: the devices {@link #affinity()} ranks for */
    public List<PciDevice> computeDevices() {
        return devices.stream()
                .filter(d -> d.kind() == DeviceKind.GPU || d.kind() == DeviceKind.ACCELERATOR)
                .toList();
    }

    /** @return a device by address ({@code 0000:1b:00.0} or {@code 1b:00.0}); empty when absent or not an address */
    public Optional<PciDevice> device(String bdf) {
        PciAddress a = PciAddress.tryParse(bdf);
        return a == null ? Optional.empty() : device(a);
    }

    /** @return a device by address */
    public Optional<PciDevice> device(PciAddress address) {
        return Optional.ofNullable(byAddress.get(address));
    }

    /** @return the NICs the filter lets through, by address */
    public List<PciDevice> nics() {
        return devices.stream()
                .filter(d -> d.kind() == DeviceKind.NIC && filter.allows(d))
                .toList();
    }

    /**
     * @return {@link #nics()}, never empty
     * @throws TopologyException saying there is no usable RDMA NIC (and whether the filter removed some)
     */
    public List<PciDevice> requireNics() {
        List<PciDevice> nics = nics();
        if (nics.isEmpty()) {
            long all = devices(DeviceKind.NIC).size();
            throw new TopologyException(
                    all == 0
                            ? "no RDMA NIC in this topology (" + source() + "): nothing to place transfers on; "
                                    + "check that the RDMA drivers are loaded (ls /sys/class/infiniband) or pass the machine's topology file"
                            : "the NIC filter '" + filter.spec() + "' removed all " + all + " RDMA NICs ("
                                    + devices(DeviceKind.NIC).stream()
                                            .flatMap(d -> d.names().stream())
                                            .collect(Collectors.joining(", "))
                                    + "); fix " + NicFilter.ENV + " or the builder's nicFilter");
        }
        return nics;
    }

    /** @return the filter in effect */
    public NicFilter nicFilter() {
        return filter;
    }

    /**
     * @return the bridges the source lists (sysfs: /sys/bus/pci/devices; files: every bridge element), by address; a
     *     device's {@link PciDevice#path()} may also hold bridges missing from this list
     */
    public List<PciBridge> bridges() {
        return List.copyOf(model.bridges.values());
    }

    /** @return NUMA nodes by id */
    public List<NumaNode> numaNodes() {
        return List.copyOf(model.numaNodes);
    }

    /** @return one NUMA node */
    public Optional<NumaNode> numaNode(int id) {
        return model.numaNodes.stream().filter(n -> n.id() == id).findFirst();
    }

    /**
     * The NUMA node whose CPUs should drive transfers for a location: its own node when that has CPUs, else the nearest
     * node that has (memory-only nodes are never a CPU home).
     *
     * @return the node id, or -1 when the location's node is unknown
     */
    public int cpuHome(Location location) {
        int node = switch (location) {
            case Location.Numa n -> n.node();
            case Location.Device d -> require(d.address()).numaNode();
        };
        if (node < 0) {
            return -1;
        }
        Optional<NumaNode> own = numaNode(node);
        if (own.isEmpty() || own.get().hasCpus()) {
            return node;
        }
        int best = -1;
        int bestDistance = Integer.MAX_VALUE;
        for (NumaNode n : model.numaNodes) {
            if (!n.hasCpus()) {
                continue;
            }
            int dist = own.get().distanceTo(n.id());
            int key = dist < 0 ? Integer.MAX_VALUE - 1 : dist;
            if (key < bestDistance) {
                bestDistance = key;
                best = n.id();
            }
        }
        return best;
    }

    /**
     * {@return the PCI address, NUMA node and link speed of the NIC named {@code name}: a verbs device ({@code mlx5_0})
     * or, failing that, a network interface ({@code eth0}); {@link NicAttributes#unknown} when neither is known}
     */
    public NicAttributes nicAttributes(String name) {
        RdmaDevice rdma = model.rdmaDevices.stream()
                .filter(d -> d.name().equals(name))
                .findFirst()
                .orElse(null);
        PciDevice fn = null;
        if (rdma != null && rdma.pci().isPresent()) {
            fn = device(rdma.pci().get()).orElse(null);
        } else if (rdma == null) {
            fn = devices.stream()
                    .filter(d -> d.netdevs().contains(name))
                    .findFirst()
                    .orElse(null);
        }
        double rate = 0;
        if (rdma != null) {
            rate = rdma.ports().stream()
                    .filter(RdmaPort::active)
                    .mapToDouble(RdmaPort::rateGbps)
                    .max()
                    .orElse(rdma.maxRateGbps());
        }
        String pci =
                fn != null && fn.address().domain() <= 0xffff ? fn.address().toString() : null;
        int numa = fn != null ? Math.max(-1, fn.numaNode()) : numaNodes().size() == 1 ? 0 : -1;
        return new NicAttributes(name, pci, numa, rate > 0 ? rate : NicAttributes.UNKNOWN_RATE_GBPS);
    }

    /** @return every verbs device, including those with no PCI function */
    public List<RdmaDevice> rdmaDevices() {
        return List.copyOf(model.rdmaDevices);
    }

    /** @return NVMe controllers, PCIe and fabrics */
    public List<NvmeController> nvmeControllers() {
        return List.copyOf(model.nvmeControllers);
    }

    /** @return NVMe namespaces with their paths (multipath: one path per controller) */
    public List<NvmeNamespace> nvmeNamespaces() {
        return List.copyOf(model.nvmeNamespaces);
    }

    /** @return what the sources contradict or leave out (e.g. numa_node against local_cpulist), for the user to see */
    public List<String> warnings() {
        return List.copyOf(model.warnings);
    }

    private PciDevice require(PciAddress a) {
        PciDevice d = byAddress.get(a);
        if (d == null) {
            throw new TopologyException(
                    "no PCI device " + a + " in this topology (" + source() + "); GPUs and accelerators here: "
                            + (computeDevices().isEmpty()
                                    ? "none"
                                    : computeDevices().stream()
                                            .map(x -> x.address().toString())
                                            .collect(Collectors.joining(", "))));
        }
        return d;
    }

    private Ranker.Relation relation(Location from, PciDevice to) {
        return switch (from) {
            case Location.Numa n -> Ranker.relate(n.node(), to);
            case Location.Device d -> Ranker.relate(require(d.address()), to);
        };
    }

    /** The level between two devices. */
    public Level level(PciAddress a, PciAddress b) {
        return Ranker.relate(require(a), require(b)).level();
    }

    /**
     * NICs (after the filter) ranked for a location, best first.
     *
     * @throws TopologyException when the location names no device of this topology
     */
    public List<Ranked<PciDevice>> rankNics(Location from) {
        if (from instanceof Location.Device d) {
            require(d.address());
        }
        List<Ranker.Candidate<PciDevice>> c = new ArrayList<>();
        for (PciDevice nic : nics()) {
            c.add(new Ranker.Candidate<>(
                    nic, nic.address(), relation(from, nic), nic.link().gbps()));
        }
        return Ranker.rank(c);
    }

    /** {@link #rankNics(Location)} for {@code numa:N} or a PCI address. */
    public List<Ranked<PciDevice>> rankNics(String location) {
        return rankNics(Location.parse(location));
    }

    /**
     * NVMe controllers ranked for a location, best first: a PCIe drive by its own position, a fabrics drive by the NIC
     * that reaches it (by its NUMA node when that NIC is not known).
     */
    public List<Ranked<NvmeController>> rankNvme(Location from) {
        if (from instanceof Location.Device d) {
            require(d.address());
        }
        List<Ranker.Candidate<NvmeController>> c = new ArrayList<>();
        for (NvmeController n : model.nvmeControllers) {
            Optional<PciDevice> at =
                    n.fabrics() ? n.via().map(byAddress::get) : n.pci().map(byAddress::get);
            if (at.isPresent()) {
                c.add(new Ranker.Candidate<>(
                        n,
                        at.get().address(),
                        relation(from, at.get()),
                        at.get().link().gbps()));
            } else {
                int fromNode = switch (from) {
                    case Location.Numa x -> x.node();
                    case Location.Device d -> require(d.address()).numaNode();
                };
                Level level = n.numaNode() >= 0 && n.numaNode() == fromNode ? Level.NODE : Level.SYS;
                c.add(new Ranker.Candidate<>(
                        n,
                        n.pci().orElse(null),
                        new Ranker.Relation(level, Ranker.UNKNOWN_HOPS, Ranker.UNKNOWN_HOPS),
                        0));
            }
        }
        return Ranker.rank(c);
    }

    /** {@link #rankNvme(Location)} for {@code numa:N} or a PCI address. */
    public List<Ranked<NvmeController>> rankNvme(String location) {
        return rankNvme(Location.parse(location));
    }

    /** @return for each GPU and accelerator, by address, its NICs and NVMe drives ranked */
    public List<Affinity> affinity() {
        List<Affinity> out = new ArrayList<>();
        for (PciDevice d : computeDevices()) {
            Location l = Location.device(d.address());
            out.add(new Affinity(d, rankNics(l), rankNvme(l)));
        }
        return out;
    }

    @Override
    public String toString() {
        return "Topology[" + source() + ": " + devices.size() + " devices, "
                + devices(DeviceKind.GPU).size() + " GPUs, " + nics().size() + " NICs, " + model.numaNodes.size()
                + " NUMA nodes]";
    }
}
