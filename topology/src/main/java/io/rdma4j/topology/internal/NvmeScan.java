package io.rdma4j.topology.internal;

import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.NvmeController;
import io.rdma4j.topology.NvmeNamespace;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NVMe controllers ({@code class/nvme}: PCIe and fabrics, with the NIC a fabrics controller goes out through) and their
 * namespaces and multipath paths ({@code class/nvme-subsystem}).
 */
final class NvmeScan {
    private static final Pattern NAMESPACE = Pattern.compile("nvme\\d+n\\d+");
    private static final Pattern PATH_DEVICE = Pattern.compile("nvme\\d+c(\\d+)n\\d+");

    private final SysfsTree tree;
    private final Model model;
    private final boolean live;

    NvmeScan(SysfsTree tree, Model model, boolean live) {
        this.tree = tree;
        this.model = model;
        this.live = live;
    }

    /** Reads the controllers, then their namespaces; PCIe functions without a class entry count too. */
    void scan(Map<PciAddress, Path> pciDirs) {
        Map<String, NvmeController> byName = new LinkedHashMap<>();
        for (Path link : SysfsTree.list(tree.sys("class/nvme"))) {
            String name = link.getFileName().toString();
            Path dir = tree.real(link);
            if (dir == null) {
                model.warnings.add("NVMe controller " + name + ": its sysfs entry does not resolve; skipped");
                continue;
            }
            String transport = SysfsTree.read(dir.resolve("transport"));
            transport = transport == null || transport.isBlank() ? "pcie" : transport.trim();
            PciAddress pci = null;
            Path dev = tree.real(dir.resolve("device"));
            if (dev != null && dev.getFileName().toString().contains(":")) {
                pci = PciAddress.tryParse(dev.getFileName().toString());
            }
            if (pci == null
                    && transport.equals("pcie")
                    && dir.getParent() != null
                    && dir.getParent().getParent() != null) {
                String p = dir.getParent().getParent().getFileName().toString();
                pci = p.contains(":") ? PciAddress.tryParse(p) : null;
            }
            String address = SysfsTree.read(dir.resolve("address"));
            String nqn = SysfsTree.read(dir.resolve("subsysnqn"));
            int numa = SysfsTree.parseInt(SysfsTree.read(dir.resolve("numa_node")), -1);
            if (pci != null && model.devices.containsKey(pci)) {
                numa = model.devices.get(pci).numaNode();
            }
            NvmeController c = new NvmeController(
                    name,
                    transport,
                    Optional.ofNullable(pci),
                    address == null || transport.equals("pcie") ? "" : address,
                    nqn == null ? "" : nqn,
                    numa,
                    Optional.empty());
            if (c.fabrics()) {
                c = new NvmeController(
                        c.name(),
                        c.transport(),
                        c.pci(),
                        c.address(),
                        c.subsysnqn(),
                        c.numaNode() >= 0 ? c.numaNode() : -1,
                        Optional.ofNullable(reachingNic(c)));
                if (c.via().isPresent() && c.numaNode() < 0) {
                    PciDevice nic = model.devices.get(c.via().get());
                    c = new NvmeController(
                            c.name(), c.transport(), c.pci(), c.address(), c.subsysnqn(), nic.numaNode(), c.via());
                }
            }
            byName.put(name, c);
        }
        // PCIe NVMe functions without a /sys/class/nvme entry (old kernels register misc/nvmeN instead)
        for (PciDevice d : model.devices.values()) {
            if (d.kind() != DeviceKind.NVME) {
                continue;
            }
            boolean known = byName.values().stream()
                    .anyMatch(c -> c.pci().filter(d.address()::equals).isPresent());
            if (!known) {
                String name = "";
                Path dir = pciDirs.get(d.address());
                if (dir != null) {
                    for (String sub : List.of("nvme", "misc")) {
                        for (Path p : SysfsTree.list(dir.resolve(sub))) {
                            String n = p.getFileName().toString();
                            if (n.matches("nvme\\d+")) {
                                name = n;
                            }
                        }
                    }
                }
                byName.put(
                        name.isEmpty() ? d.address().toString() : name,
                        new NvmeController(
                                name, "pcie", Optional.of(d.address()), "", "", d.numaNode(), Optional.empty()));
            }
        }
        model.nvmeControllers.addAll(byName.values());
        scanNamespaces(byName);
    }

    /**
     * The local NIC a fabrics controller goes out through: {@code host_iface}, else (live) the owner of
     * {@code host_traddr}.
     */
    private PciAddress reachingNic(NvmeController c) {
        Optional<String> iface = c.addressField("host_iface");
        if (iface.isEmpty() && live) {
            Optional<String> hostAddr = c.addressField("host_traddr");
            if (hostAddr.isPresent()) {
                try {
                    NetworkInterface ni = NetworkInterface.getByInetAddress(InetAddress.ofLiteral(hostAddr.get()));
                    if (ni != null) {
                        iface = Optional.of(ni.getName());
                    }
                } catch (IOException | IllegalArgumentException e) {
                    // not a literal address or no such interface: the controller stays unplaced
                }
            }
        }
        if (iface.isEmpty()) {
            return null;
        }
        String name = iface.get();
        for (PciDevice d : model.devices.values()) {
            if (d.netdevs().contains(name)
                    || d.ports().stream().anyMatch(p -> p.netdevs().contains(name))) {
                return d.address();
            }
        }
        return null;
    }

    private void scanNamespaces(Map<String, NvmeController> controllers) {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (Path subsys : SysfsTree.list(tree.sys("class/nvme-subsystem"))) {
            Path dir = tree.real(subsys);
            if (dir == null) {
                continue;
            }
            String subsysName = subsys.getFileName().toString();
            for (Path ns : SysfsTree.list(dir)) {
                String nsName = ns.getFileName().toString();
                if (!NAMESPACE.matcher(nsName).matches()) {
                    continue;
                }
                List<NvmeNamespace.Path> paths = new ArrayList<>();
                for (Path p : SysfsTree.list(ns.resolve("multipath"))) {
                    String pn = p.getFileName().toString();
                    Matcher m = PATH_DEVICE.matcher(pn);
                    if (!m.matches()) {
                        continue;
                    }
                    String ctrl = "nvme" + m.group(1);
                    String ana = SysfsTree.read(p.resolve("ana_state"));
                    NvmeController c = controllers.get(ctrl);
                    paths.add(new NvmeNamespace.Path(pn, ctrl, ana == null ? "" : ana, c == null ? -1 : c.numaNode()));
                    seen.add(pn);
                }
                model.nvmeNamespaces.add(new NvmeNamespace(nsName, subsysName, paths));
                seen.add(nsName);
            }
        }
        // without native multipath each controller carries its namespaces directly
        for (NvmeController c : controllers.values()) {
            if (c.name().isEmpty()) {
                continue;
            }
            Path dir = tree.real(tree.sys("class/nvme/" + c.name()));
            if (dir == null) {
                continue;
            }
            for (Path ns : SysfsTree.list(dir)) {
                String nsName = ns.getFileName().toString();
                if (NAMESPACE.matcher(nsName).matches() && seen.add(nsName)) {
                    model.nvmeNamespaces.add(new NvmeNamespace(
                            nsName, "", List.of(new NvmeNamespace.Path(nsName, c.name(), "", c.numaNode()))));
                }
            }
        }
    }
}
