package io.rdma4j.topology.internal;

import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.PciLink;
import io.rdma4j.topology.RdmaDevice;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * PCI functions and bridges from {@code bus/pci/devices}: each function's identity, class, link, the bridges on its
 * path from the host bridge, its driver and network interfaces, and (through {@link NumaScan}) its NUMA node.
 */
final class PciScan {
    private static final Pattern HOST_BRIDGE = Pattern.compile("pci[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}");

    private final SysfsTree tree;
    private final Model model;
    private final NumaScan numa;
    /** Each function's resolved folder, for the NVMe scan's look at its children. */
    final Map<PciAddress, Path> pciDirs = new HashMap<>();
    /** Bridges recur on the paths of every device below them: read each once. */
    private final Map<Path, Attrs> bridgeAttrs = new HashMap<>();

    PciScan(SysfsTree tree, Model model, NumaScan numa) {
        this.tree = tree;
        this.model = model;
        this.numa = numa;
    }

    private record Attrs(int vendor, int device, int classCode, PciLink link) {}

    private static Attrs attrs(Path dir) {
        double speed = LinkSpeeds.gigaTransfers(SysfsTree.read(dir.resolve("current_link_speed")));
        int width = LinkSpeeds.width(SysfsTree.read(dir.resolve("current_link_width")));
        return new Attrs(
                LinkSpeeds.hex(SysfsTree.read(dir.resolve("vendor"))),
                LinkSpeeds.hex(SysfsTree.read(dir.resolve("device"))),
                LinkSpeeds.hex(SysfsTree.read(dir.resolve("class"))),
                PciLink.of(speed, width));
    }

    /** A function read from sysfs whose NUMA placement waits until every node a device names is known. */
    private record Found(
            PciAddress addr,
            Attrs attrs,
            DeviceKind kind,
            String hostBridge,
            List<PciBridge> path,
            List<RdmaDevice> verbs,
            List<String> netdevs,
            String driver,
            int numaAttr,
            BitSet local) {}

    /** Walks {@code bus/pci/devices}: bridges, then every function with its path, kind, links and locality. */
    void scan(Map<PciAddress, List<RdmaDevice>> rdma) {
        Path devicesRoot = tree.realRoot.resolve("sys/devices");
        List<Found> found = new ArrayList<>();
        for (Path link : SysfsTree.list(tree.sys("bus/pci/devices"))) {
            PciAddress addr = PciAddress.tryParse(link.getFileName().toString());
            if (addr == null) {
                continue;
            }
            Path dir = tree.real(link);
            if (dir == null) {
                model.warnings.add("PCI device " + addr + ": its sysfs entry does not resolve; skipped");
                continue;
            }
            pciDirs.put(addr, dir);
            Attrs a = attrs(dir);
            if (Classifier.isBridge(a.classCode)) {
                model.bridges.put(addr, new PciBridge(addr, a.vendor, a.device, false, a.link));
                continue;
            }
            // the resolved path from the root: /sys/devices/pci0000:80/0000:80:02.2/0000:82:00.0
            String hostBridge = "";
            List<PciBridge> path = new ArrayList<>();
            Path rel = dir.startsWith(devicesRoot) ? devicesRoot.relativize(dir) : null;
            if (rel != null) {
                Path cursor = devicesRoot;
                for (int i = 0; i < rel.getNameCount() - 1; i++) {
                    String comp = rel.getName(i).toString();
                    cursor = cursor.resolve(comp);
                    if (hostBridge.isEmpty() && HOST_BRIDGE.matcher(comp).matches()) {
                        hostBridge = comp.toLowerCase(java.util.Locale.ROOT);
                        continue;
                    }
                    PciAddress b = comp.contains(":") ? PciAddress.tryParse(comp) : null;
                    if (b != null && !hostBridge.isEmpty()) {
                        // a bridge on the path may be missing from /sys/bus/pci/devices: read it where it is
                        Attrs ba = bridgeAttrs.computeIfAbsent(cursor, PciScan::attrs);
                        path.add(new PciBridge(b, ba.vendor, ba.device, false, ba.link));
                    }
                }
            }
            if (hostBridge.isEmpty()) {
                hostBridge = "pci" + String.format("%04x:%02x", addr.domain(), addr.bus());
            }
            List<RdmaDevice> verbs = rdma.getOrDefault(addr, List.of());
            DeviceKind kind = Classifier.kind(
                    a.vendor,
                    a.device,
                    a.classCode,
                    verbs.isEmpty() ? Classifier.RdmaEvidence.NO : Classifier.RdmaEvidence.YES,
                    null,
                    false);
            List<String> netdevs = new ArrayList<>();
            for (Path n : SysfsTree.list(dir.resolve("net"))) {
                netdevs.add(n.getFileName().toString());
            }
            String driver = "";
            Path drv = tree.real(dir.resolve("driver"));
            if (drv != null) {
                driver = drv.getFileName().toString();
            }
            int numaAttr = SysfsTree.parseInt(SysfsTree.read(dir.resolve("numa_node")), -1);
            String lcl = SysfsTree.read(dir.resolve("local_cpulist"));
            BitSet local =
                    lcl != null ? CpuSets.parseList(lcl) : CpuSets.parseMask(SysfsTree.read(dir.resolve("local_cpus")));
            found.add(new Found(addr, a, kind, hostBridge, path, verbs, netdevs, driver, numaAttr, local));
        }
        numa.addNodesNamedByDevices(found.stream()
                .map(f -> new NumaScan.Claim(f.addr, f.numaAttr, f.local))
                .toList());
        for (Found f : found) {
            NumaScan.Locality loc = numa.locality(f.addr, f.numaAttr, f.local);
            if (loc.node() < 0 && f.kind != DeviceKind.OTHER && numa.nodeCount() > 1) {
                model.warnings.add(f.addr + " (" + f.kind.jsonName() + "): no NUMA locality (numa_node=" + f.numaAttr
                        + ", local_cpulist=" + (f.local.isEmpty() ? "none" : CpuSets.format(CpuSets.toList(f.local)))
                        + "): ranked as remote from every node");
            }
            model.devices.put(
                    f.addr,
                    new PciDevice(
                            f.addr,
                            f.kind,
                            f.attrs.vendor,
                            f.attrs.device,
                            f.attrs.classCode,
                            loc.node(),
                            loc.source(),
                            CpuSets.toList(f.local),
                            f.attrs.link,
                            f.hostBridge,
                            f.path,
                            f.verbs,
                            f.netdevs,
                            List.of(),
                            f.driver,
                            Optional.ofNullable(loc.conflict())));
        }
    }
}
