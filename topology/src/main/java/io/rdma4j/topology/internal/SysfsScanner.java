package io.rdma4j.topology.internal;

import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NumaSource;
import io.rdma4j.topology.NvmeController;
import io.rdma4j.topology.NvmeNamespace;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.PciLink;
import io.rdma4j.topology.RdmaDevice;
import io.rdma4j.topology.RdmaPort;
import io.rdma4j.topology.TopologyException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code sys/} under a filesystem root: the live machine ({@code /}) or a captured tree (hwloc's gather tool,
 * whose tarballs unpack to a folder holding {@code sys/} and {@code proc/}).
 *
 * <p>Every file may be missing or unreadable (old kernels, captures that skipped it, permissions): a missing attribute
 * leaves the field unknown and never aborts the scan. Symbolic links are resolved inside the root, so a captured tree
 * is read the same way as the live one.
 */
public final class SysfsScanner {
    private static final Pattern HOST_BRIDGE = Pattern.compile("pci[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}");
    private static final Pattern NODE_DIR = Pattern.compile("node(\\d+)");
    private static final Pattern CPU_DIR = Pattern.compile("cpu(\\d+)");
    private static final Pattern NAMESPACE = Pattern.compile("nvme\\d+n\\d+");
    private static final Pattern PATH_DEVICE = Pattern.compile("nvme\\d+c(\\d+)n\\d+");
    private static final Pattern MEM_TOTAL = Pattern.compile("MemTotal:\\s+(\\d+)\\s*kB");

    private final Path root;
    private final Path realRoot;
    private final boolean live;
    private final Model model = new Model();
    private final Map<Integer, BitSet> nodeCpus = new TreeMap<>();
    /** True when the tree had no node folders and node 0 was assumed to hold every CPU. */
    private boolean singleNodeGuessed;

    private final Map<PciAddress, Path> pciDirs = new HashMap<>();
    /** Bridges recur on the paths of every device below them: read each once. */
    private final Map<Path, Attrs> bridgeAttrs = new HashMap<>();

    private SysfsScanner(Path root, boolean live) {
        this.root = root;
        this.live = live;
        try {
            this.realRoot = root.toRealPath();
        } catch (IOException e) {
            throw new TopologyException(
                    "cannot read the filesystem root " + root + ": " + e.getMessage()
                            + " (pass a folder that holds sys/, e.g. an unpacked hwloc-gather-topology capture)",
                    e);
        }
    }

    /**
     * @param root folder holding {@code sys/} (and optionally {@code proc/})
     * @param live true when this is the running machine: fabrics NVMe controllers are then matched to NICs through the
     *     host's network interfaces
     */
    public static Model scan(Path root, boolean live) {
        SysfsScanner s = new SysfsScanner(root, live);
        if (!Files.isDirectory(s.realRoot.resolve("sys"))) {
            throw new TopologyException("no sys/ under " + root + ": pass the folder that holds sys/ and proc/ "
                    + "(a captured tree's top folder can differ from its tarball's name)");
        }
        s.model.source = live ? "sysfs" : "sysfs:" + root;
        s.scanNuma();
        Map<PciAddress, List<RdmaDevice>> rdma = s.scanRdma();
        s.scanPci(rdma);
        s.scanNvme();
        return s.model;
    }

    // ---- files -----------------------------------------------------------------------------------------------

    private static String read(Path p) {
        try {
            if (!Files.isRegularFile(p)) {
                return null;
            }
            return Files.readString(p, StandardCharsets.ISO_8859_1).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static List<Path> list(Path dir) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                out.add(p);
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable directory contributes nothing
        }
        out.sort(null);
        return out;
    }

    /**
     * Resolves symbolic links and returns the path only when it stays inside the root. Sysfs links are relative, go up
     * first and then down through real directories ({@code ../../../devices/pci0000:80/...}), so one readlink and a
     * lexical join give the real path; {@code toRealPath} (a readlink per component) is the fallback for anything else.
     * {@code p}'s parent must itself be a real path, as every caller's is.
     */
    private Path real(Path p) {
        try {
            Path cur = p;
            for (int depth = 0; depth < 8; depth++) {
                if (!Files.isSymbolicLink(cur)) {
                    return cur.startsWith(realRoot) && Files.exists(cur, LinkOption.NOFOLLOW_LINKS) ? cur : null;
                }
                Path target = Files.readSymbolicLink(cur);
                if (target.isAbsolute() || !upThenDown(target) || cur.getParent() == null) {
                    break;
                }
                cur = cur.getParent().resolve(target).normalize();
            }
            Path r = p.toRealPath();
            return r.startsWith(realRoot) ? r : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** True when {@code ..} appears only as a leading run: joining lexically is then exact. */
    private static boolean upThenDown(Path target) {
        boolean down = false;
        for (Path part : target) {
            String n = part.toString();
            if (n.equals("..")) {
                if (down) {
                    return false;
                }
            } else if (!n.equals(".")) {
                down = true;
            }
        }
        return true;
    }

    /** The target of a link by its text, without touching the target (which may be missing). */
    private Path lexical(Path link) {
        try {
            Path t = Files.readSymbolicLink(link);
            Path abs = t.isAbsolute()
                    ? realRoot.resolve(t.toString().substring(1))
                    : link.getParent().resolve(t);
            return abs.normalize();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private Path sys(String rel) {
        return realRoot.resolve("sys").resolve(rel);
    }

    // ---- NUMA -------------------------------------------------------------------------------------------------

    private void scanNuma() {
        Map<Integer, Path> nodes = new TreeMap<>();
        for (Path p : list(sys("devices/system/node"))) {
            Matcher m = NODE_DIR.matcher(p.getFileName().toString());
            if (m.matches() && Files.isDirectory(p)) {
                nodes.put(Integer.parseInt(m.group(1)), p);
            }
        }
        if (nodes.isEmpty()) {
            // a kernel without NUMA: one node with every CPU and all memory
            BitSet cpus = CpuSets.parseList(read(sys("devices/system/cpu/online")));
            if (cpus.isEmpty()) {
                for (Path p : list(sys("devices/system/cpu"))) {
                    Matcher m = CPU_DIR.matcher(p.getFileName().toString());
                    if (m.matches()) {
                        cpus.set(Integer.parseInt(m.group(1)));
                    }
                }
            }
            long mem = 0;
            String meminfo = read(realRoot.resolve("proc/meminfo"));
            if (meminfo != null) {
                Matcher m = MEM_TOTAL.matcher(meminfo);
                if (m.find()) {
                    mem = Long.parseLong(m.group(1)) * 1024;
                }
            }
            nodeCpus.put(0, cpus);
            model.numaNodes.add(new NumaNode(0, CpuSets.toList(cpus), mem, List.of(10)));
            singleNodeGuessed = true;
            return;
        }
        for (Map.Entry<Integer, Path> e : nodes.entrySet()) {
            Path dir = e.getValue();
            BitSet cpus = CpuSets.parseList(read(dir.resolve("cpulist")));
            if (cpus.isEmpty()) {
                for (Path p : list(dir)) {
                    Matcher m = CPU_DIR.matcher(p.getFileName().toString());
                    if (m.matches()) {
                        cpus.set(Integer.parseInt(m.group(1)));
                    }
                }
            }
            long mem = 0;
            String meminfo = read(dir.resolve("meminfo"));
            if (meminfo != null) {
                Matcher m = MEM_TOTAL.matcher(meminfo);
                if (m.find()) {
                    mem = Long.parseLong(m.group(1)) * 1024;
                }
            }
            List<Integer> distances = new ArrayList<>();
            String d = read(dir.resolve("distance"));
            if (d != null && !d.isBlank()) {
                for (String t : d.trim().split("\\s+")) {
                    try {
                        distances.add(Integer.parseInt(t));
                    } catch (NumberFormatException ex) {
                        distances.clear();
                        break;
                    }
                }
            }
            nodeCpus.put(e.getKey(), cpus);
            model.numaNodes.add(new NumaNode(e.getKey(), CpuSets.toList(cpus), mem, distances));
        }
    }

    // ---- RDMA -------------------------------------------------------------------------------------------------

    private Map<PciAddress, List<RdmaDevice>> scanRdma() {
        Map<PciAddress, List<RdmaDevice>> byPci = new HashMap<>();
        for (Path link : list(sys("class/infiniband"))) {
            String name = link.getFileName().toString();
            Path dir = real(link);
            if (dir == null) {
                // a capture can hold the class link without its target (Xeon Phi's scif0 -> devices/scif_dma_0):
                // read the link text, list the device, place it nowhere
                Path target = lexical(link);
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
            List<Path> portDirs = list(dir.resolve("ports"));
            Map<String, Integer> devPorts = new LinkedHashMap<>();
            if (parent != null) {
                for (Path net : list(parent.resolve("net"))) {
                    String devPort = read(net.resolve("dev_port"));
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
                String state = read(pd.resolve("state"));
                if (state != null && state.contains(":")) {
                    state = state.substring(state.indexOf(':') + 1).trim();
                }
                String linkLayer = read(pd.resolve("link_layer"));
                double rate = LinkSpeeds.portRateGbps(read(pd.resolve("rate")));
                List<String> netdevs = new ArrayList<>();
                String ndev = read(pd.resolve("gid_attrs/ndevs/0"));
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

    // ---- PCI --------------------------------------------------------------------------------------------------

    private record Attrs(int vendor, int device, int classCode, PciLink link) {}

    private static Attrs attrs(Path dir) {
        double speed = LinkSpeeds.gigaTransfers(read(dir.resolve("current_link_speed")));
        int width = LinkSpeeds.width(read(dir.resolve("current_link_width")));
        return new Attrs(
                LinkSpeeds.hex(read(dir.resolve("vendor"))),
                LinkSpeeds.hex(read(dir.resolve("device"))),
                LinkSpeeds.hex(read(dir.resolve("class"))),
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

    private void scanPci(Map<PciAddress, List<RdmaDevice>> rdma) {
        Path devicesRoot = realRoot.resolve("sys/devices");
        List<Found> found = new ArrayList<>();
        for (Path link : list(sys("bus/pci/devices"))) {
            PciAddress addr = PciAddress.tryParse(link.getFileName().toString());
            if (addr == null) {
                continue;
            }
            Path dir = real(link);
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
                        Attrs ba = bridgeAttrs.computeIfAbsent(cursor, SysfsScanner::attrs);
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
            for (Path n : list(dir.resolve("net"))) {
                netdevs.add(n.getFileName().toString());
            }
            String driver = "";
            Path drv = real(dir.resolve("driver"));
            if (drv != null) {
                driver = drv.getFileName().toString();
            }
            int numaAttr = parseInt(read(dir.resolve("numa_node")), -1);
            String lcl = read(dir.resolve("local_cpulist"));
            BitSet local = lcl != null ? CpuSets.parseList(lcl) : CpuSets.parseMask(read(dir.resolve("local_cpus")));
            found.add(new Found(addr, a, kind, hostBridge, path, verbs, netdevs, driver, numaAttr, local));
        }
        addNodesNamedByDevices(found);
        for (Found f : found) {
            Locality loc = locality(f.addr, f.numaAttr, f.local);
            if (loc.node < 0 && f.kind != DeviceKind.OTHER && nodeCpus.size() > 1) {
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
                            loc.node,
                            loc.source,
                            CpuSets.toList(f.local),
                            f.attrs.link,
                            f.hostBridge,
                            f.path,
                            f.verbs,
                            f.netdevs,
                            List.of(),
                            f.driver,
                            Optional.ofNullable(loc.conflict)));
        }
    }

    /**
     * A node that a device's {@code numa_node} names exists even when its folder is missing (a capture that skipped
     * {@code devices/system/node}, a trimmed tree): it is listed with the CPUs its devices report local. When the tree
     * had no node folder at all, node 0 was a guess holding every CPU; the CPUs the named nodes claim leave it, and its
     * memory (the whole machine's) becomes unknown.
     */
    private void addNodesNamedByDevices(List<Found> found) {
        BitSet all = new BitSet();
        nodeCpus.values().forEach(all::or);
        TreeMap<Integer, BitSet> named = new TreeMap<>();
        TreeMap<Integer, List<String>> namedBy = new TreeMap<>();
        for (Found f : found) {
            if (f.numaAttr < 0 || nodeCpus.containsKey(f.numaAttr)) {
                continue;
            }
            BitSet cpus = named.computeIfAbsent(f.numaAttr, k -> new BitSet());
            namedBy.computeIfAbsent(f.numaAttr, k -> new ArrayList<>()).add(f.addr.toString());
            // a local_cpulist of every CPU (as platforms without locality report) says nothing about the node
            if (!f.local.equals(all)) {
                cpus.or(f.local);
            }
        }
        if (named.isEmpty()) {
            return;
        }
        if (singleNodeGuessed) {
            BitSet claimed = new BitSet();
            named.values().forEach(claimed::or);
            BitSet rest = (BitSet) nodeCpus.get(0).clone();
            rest.andNot(claimed);
            boolean node0Named = found.stream().anyMatch(f -> f.numaAttr == 0);
            model.numaNodes.removeIf(n -> n.id() == 0);
            nodeCpus.remove(0);
            if (!rest.isEmpty() || node0Named) {
                nodeCpus.put(0, rest);
                model.numaNodes.add(new NumaNode(0, CpuSets.toList(rest), 0, List.of()));
            }
        }
        named.forEach((id, cpus) -> {
            nodeCpus.put(id, cpus);
            model.numaNodes.add(new NumaNode(id, CpuSets.toList(cpus), 0, List.of()));
            List<String> by = namedBy.get(id);
            model.warnings.add("NUMA node " + id + " is named by numa_node of "
                    + String.join(", ", by.subList(0, Math.min(4, by.size()))) + (by.size() > 4 ? ", ..." : "")
                    + " but sys/devices/system/node/node" + id
                    + " is missing: listed with the CPUs those devices report local ("
                    + (cpus.isEmpty() ? "none" : CpuSets.format(CpuSets.toList(cpus))) + "), memory unknown");
        });
        model.numaNodes.sort((a, b) -> Integer.compare(a.id(), b.id()));
    }

    private record Locality(int node, NumaSource source, String conflict) {}

    /** numa_node=-1 falls back to local_cpulist; a contradiction between the two is reported, keeping numa_node. */
    private Locality locality(PciAddress addr, int numaAttr, BitSet local) {
        if (numaAttr >= 0) {
            BitSet own = nodeCpus.get(numaAttr);
            if (own != null && !own.isEmpty() && !local.isEmpty()) {
                BitSet outside = (BitSet) local.clone();
                outside.andNot(own);
                if (!outside.isEmpty()) {
                    String msg = addr + ": numa_node=" + numaAttr + " but local_cpulist="
                            + CpuSets.format(CpuSets.toList(local))
                            + " spans node(s) " + nodesOf(local) + " (node " + numaAttr + " has CPUs "
                            + CpuSets.format(CpuSets.toList(own)) + "); locality is contradictory, using numa_node="
                            + numaAttr;
                    model.warnings.add(msg);
                    return new Locality(numaAttr, NumaSource.NUMA_NODE, msg);
                }
            }
            return new Locality(numaAttr, NumaSource.NUMA_NODE, null);
        }
        if (nodeCpus.size() == 1) {
            return new Locality(nodeCpus.keySet().iterator().next(), NumaSource.SINGLE_NODE, null);
        }
        if (!local.isEmpty()) {
            int found = -1;
            for (Map.Entry<Integer, BitSet> e : nodeCpus.entrySet()) {
                BitSet rest = (BitSet) local.clone();
                rest.andNot(e.getValue());
                if (!e.getValue().isEmpty() && rest.isEmpty()) {
                    found = e.getKey();
                    break;
                }
            }
            if (found >= 0) {
                return new Locality(found, NumaSource.LOCAL_CPULIST, null);
            }
        }
        return new Locality(-1, NumaSource.UNKNOWN, null);
    }

    private List<Integer> nodesOf(BitSet cpus) {
        List<Integer> out = new ArrayList<>();
        nodeCpus.forEach((n, c) -> {
            if (c.intersects(cpus)) {
                out.add(n);
            }
        });
        return out;
    }

    private static int parseInt(String s, int dflt) {
        if (s == null) {
            return dflt;
        }
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    // ---- NVMe -------------------------------------------------------------------------------------------------

    private void scanNvme() {
        Map<String, NvmeController> byName = new LinkedHashMap<>();
        for (Path link : list(sys("class/nvme"))) {
            String name = link.getFileName().toString();
            Path dir = real(link);
            if (dir == null) {
                model.warnings.add("NVMe controller " + name + ": its sysfs entry does not resolve; skipped");
                continue;
            }
            String transport = read(dir.resolve("transport"));
            transport = transport == null || transport.isBlank() ? "pcie" : transport.trim();
            PciAddress pci = null;
            Path dev = real(dir.resolve("device"));
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
            String address = read(dir.resolve("address"));
            String nqn = read(dir.resolve("subsysnqn"));
            int numa = parseInt(read(dir.resolve("numa_node")), -1);
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
                        for (Path p : list(dir.resolve(sub))) {
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
        for (Path subsys : list(sys("class/nvme-subsystem"))) {
            Path dir = real(subsys);
            if (dir == null) {
                continue;
            }
            String subsysName = subsys.getFileName().toString();
            for (Path ns : list(dir)) {
                String nsName = ns.getFileName().toString();
                if (!NAMESPACE.matcher(nsName).matches()) {
                    continue;
                }
                List<NvmeNamespace.Path> paths = new ArrayList<>();
                for (Path p : list(ns.resolve("multipath"))) {
                    String pn = p.getFileName().toString();
                    Matcher m = PATH_DEVICE.matcher(pn);
                    if (!m.matches()) {
                        continue;
                    }
                    String ctrl = "nvme" + m.group(1);
                    String ana = read(p.resolve("ana_state"));
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
            Path dir = real(sys("class/nvme/" + c.name()));
            if (dir == null) {
                continue;
            }
            for (Path ns : list(dir)) {
                String nsName = ns.getFileName().toString();
                if (NAMESPACE.matcher(nsName).matches() && seen.add(nsName)) {
                    model.nvmeNamespaces.add(new NvmeNamespace(
                            nsName, "", List.of(new NvmeNamespace.Path(nsName, c.name(), "", c.numaNode()))));
                }
            }
        }
    }
}
