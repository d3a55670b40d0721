package io.rdma4j.topology.internal;

import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.RdmaDevice;
import io.rdma4j.topology.RdmaPort;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** RDMA devices from {@code class/infiniband}: their ports, link layers, rates and the network interfaces on them. */
final class RdmaScan {
    private final SysfsTree tree;
    private final Model model;

    RdmaScan(SysfsTree tree, Model model) {
        this.tree = tree;
        this.model = model;
    }

    /** @return the RDMA devices by the PCI function under them, after adding every device to the model */
    Map<PciAddress, List<RdmaDevice>> scan() {
        Map<PciAddress, List<RdmaDevice>> byPci = new HashMap<>();
        for (Path link : SysfsTree.list(tree.sys("class/infiniband"))) {
            String name = link.getFileName().toString();
            Path dir = tree.real(link);
            if (dir == null) {
                // a capture can hold the class link without its target (Xeon Phi's scif0 -> devices/scif_dma_0):
                // read the link text, list the device, place it nowhere
                Path target = tree.lexical(link);
                String parentName = target == null
                                || target.getParent() == null
                                || target.getParent().getParent() == null
                        ? "?"
                        : target.getParent().getParent().getFileName().toString();
                PciAddress pci = parentName.contains(":") ? PciAddress.tryParse(parentName) : null;
                RdmaDevice r = new RdmaDevice(name, Optional.ofNullable(pci), List.of());
                model.rdmaDevices.add(r);
                if (pci != null) {
                    byPci.computeIfAbsent(pci, k -> new ArrayList<>()).add(r);
                }
                model.warnings.add("RDMA device " + name + ": sysfs entry points to a missing " + parentName
                        + (pci == null ? " (no PCI function): listed, not placed" : ": ports unknown"));
                continue;
            }
            // .../<parent device>/infiniband/<name>: a parent that is no PCI function (Xeon Phi's scif0) is fine
            Path parent = dir.getParent() == null ? null : dir.getParent().getParent();
            PciAddress pci = parent == null
                    ? null
                    : PciAddress.tryParse(parent.getFileName().toString());
            if (pci != null && !parent.getFileName().toString().contains(":")) {
                pci = null;
            }
            List<RdmaPort> ports = new ArrayList<>();
            List<Path> portDirs = SysfsTree.list(dir.resolve("ports"));
            Map<String, Integer> devPorts = new LinkedHashMap<>();
            if (parent != null) {
                for (Path net : SysfsTree.list(parent.resolve("net"))) {
                    String devPort = SysfsTree.read(net.resolve("dev_port"));
                    int dp = -1;
                    try {
                        dp = devPort == null ? -1 : Integer.parseInt(devPort.trim());
                    } catch (NumberFormatException e) {
                        dp = -1;
                    }
                    devPorts.put(net.getFileName().toString(), dp);
                }
            }
            for (Path pd : portDirs) {
                int number;
                try {
                    number = Integer.parseInt(pd.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                String state = SysfsTree.read(pd.resolve("state"));
                if (state != null && state.contains(":")) {
                    state = state.substring(state.indexOf(':') + 1).trim();
                }
                String linkLayer = SysfsTree.read(pd.resolve("link_layer"));
                double rate = LinkSpeeds.portRateGbps(SysfsTree.read(pd.resolve("rate")));
                List<String> netdevs = new ArrayList<>();
                String ndev = SysfsTree.read(pd.resolve("gid_attrs/ndevs/0"));
                if (ndev != null && !ndev.isBlank()) {
                    netdevs.add(ndev);
                } else if (portDirs.size() == 1) {
                    netdevs.addAll(devPorts.keySet());
                } else {
                    devPorts.forEach((n, dp) -> {
                        if (dp + 1 == number) {
                            netdevs.add(n);
                        }
                    });
                }
                ports.add(new RdmaPort(
                        number, linkLayer == null ? "" : linkLayer, state == null ? "" : state, rate, netdevs));
            }
            RdmaDevice r = new RdmaDevice(name, Optional.ofNullable(pci), ports);
            model.rdmaDevices.add(r);
            if (pci != null) {
                byPci.computeIfAbsent(pci, k -> new ArrayList<>()).add(r);
            }
        }
        return byPci;
    }
}
