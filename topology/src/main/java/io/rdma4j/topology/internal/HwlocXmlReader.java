package io.rdma4j.topology.internal;

import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NumaSource;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.PciLink;
import io.rdma4j.topology.RdmaDevice;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.w3c.dom.Element;

/**
 * Reads hwloc's XML export (versions 2 and 3): {@code object} elements of type {@code NUMANode}, {@code Bridge}
 * ({@code bridge_type="0-1"} is a host bridge), {@code PCIDev} and {@code OSDev}; a device's NUMA node is the nodeset
 * of the nearest enclosing object that has exactly one node.
 */
final class HwlocXmlReader {
    private static final Pattern PCI_TYPE =
            Pattern.compile("([0-9a-fA-F]{4}) \\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\\].*");
    /** hwloc 3 osdev_type is a bit set: NETWORK=16, OPENFABRICS=32. */
    private static final int V3_NETWORK = 16;

    private static final int V3_OPENFABRICS = 32;
    /** hwloc 2 osdev_type is an enum: NETWORK=2, OPENFABRICS=3. */
    private static final int V2_NETWORK = 2;

    private static final int V2_OPENFABRICS = 3;
    /** GPU and co-processor OS devices (nvml, opencl, rsmi): hwloc 3 bits 4 and 8, hwloc 2 values 1 and 5. */
    private static final int V3_GPU_OR_COPROC = 4 | 8;

    private static final int V2_GPU = 1;
    private static final int V2_COPROC = 5;

    private final Model model = new Model();
    private final boolean v3;
    private final TreeMap<Integer, NumaNode> nodes = new TreeMap<>();
    private int hostBridges;

    private HwlocXmlReader(boolean v3) {
        this.v3 = v3;
    }

    static Model read(Path file, Element topology) {
        String version = Xml.attr(topology, "version");
        HwlocXmlReader r = new HwlocXmlReader(version != null && !version.startsWith("1") && !version.startsWith("2"));
        r.model.source = "hwloc-xml:" + file;
        for (Element o : Xml.children(topology, "object")) {
            r.visit(o, -1, null, List.of());
        }
        r.distances(topology);
        r.model.numaNodes.addAll(r.nodes.values());
        return r.model;
    }

    private void visit(Element o, int numa, String hostBridge, List<PciBridge> path) {
        String type = Xml.attr(o, "type");
        BitSet nodeset = CpuSets.parseMask(Xml.attr(o, "nodeset"));
        if (nodeset.cardinality() == 1) {
            numa = nodeset.nextSetBit(0);
        }
        if ("NUMANode".equals(type)) {
            int id = parseInt(Xml.attr(o, "os_index"), nodes.size());
            long mem = parseLong(Xml.attr(o, "local_memory"));
            nodes.put(id, new NumaNode(id, CpuSets.toList(CpuSets.parseMask(Xml.attr(o, "cpuset"))), mem, List.of()));
        } else if ("Bridge".equals(type)) {
            String bt = Xml.attr(o, "bridge_type");
            if (bt != null && bt.startsWith("0-")) {
                String range = Xml.attr(o, "bridge_pci");
                String id = "hostbridge:" + (range != null ? range : Integer.toString(hostBridges));
                hostBridges++;
                for (Element k : Xml.children(o, "object")) {
                    visit(k, numa, id, List.of());
                }
                return;
            }
            PciAddress addr = PciAddress.tryParse(Xml.attr(o, "pci_busid"));
            int[] ids = pciType(Xml.attr(o, "pci_type"));
            List<PciBridge> below = new ArrayList<>(path);
            if (addr != null) {
                PciBridge b = new PciBridge(addr, ids[1], ids[2], false, link(o));
                model.bridges.put(addr, b);
                model.placements.put(addr, new Model.Placement(hostBridge, List.copyOf(path), numa));
                below.add(b);
            }
            for (Element k : Xml.children(o, "object")) {
                visit(k, numa, hostBridge, below);
            }
            return;
        } else if ("PCIDev".equals(type)) {
            device(o, numa, hostBridge, path);
            return;
        }
        for (Element k : Xml.children(o, "object")) {
            visit(k, numa, hostBridge, path);
        }
    }

    private void device(Element o, int numa, String hostBridge, List<PciBridge> path) {
        PciAddress addr = PciAddress.tryParse(Xml.attr(o, "pci_busid"));
        if (addr == null) {
            model.warnings.add("hwloc PCIDev without a valid pci_busid (" + Xml.attr(o, "pci_busid") + "): skipped");
            return;
        }
        int[] ids = pciType(Xml.attr(o, "pci_type"));
        // hwloc keeps the 16-bit class without the programming interface
        int cls = ids[0] < 0 ? -1 : ids[0] << 8;
        List<RdmaDevice> rdma = new ArrayList<>();
        List<String> netdevs = new ArrayList<>();
        boolean gpu = false;
        for (Element k : Xml.children(o, "object")) {
            if (!"OSDev".equals(Xml.attr(k, "type"))) {
                continue;
            }
            String name = Xml.attr(k, "name");
            int t = parseInt(Xml.attr(k, "osdev_type"), -1);
            if (name == null || t < 0) {
                continue;
            }
            boolean fabrics = v3 ? (t & V3_OPENFABRICS) != 0 : t == V2_OPENFABRICS;
            boolean network = v3 ? (t & V3_NETWORK) != 0 : t == V2_NETWORK;
            gpu |= v3 ? (t & V3_GPU_OR_COPROC) != 0 : t == V2_GPU || t == V2_COPROC;
            if (fabrics) {
                rdma.add(new RdmaDevice(name, Optional.of(addr), List.of()));
            } else if (network) {
                netdevs.add(name);
            }
        }
        DeviceKind kind = Classifier.kind(
                ids[1],
                ids[2],
                cls,
                rdma.isEmpty() ? Classifier.RdmaEvidence.NO : Classifier.RdmaEvidence.YES,
                Xml.attr(o, "subtype"),
                gpu);
        model.rdmaDevices.addAll(rdma);
        model.placements.put(addr, new Model.Placement(hostBridge, List.copyOf(path), numa));
        model.devices.put(
                addr,
                new PciDevice(
                        addr,
                        kind,
                        ids[1],
                        ids[2],
                        cls,
                        numa,
                        numa >= 0 ? NumaSource.TOPOLOGY_FILE : NumaSource.UNKNOWN,
                        List.of(),
                        link(o),
                        hostBridge == null ? "hwloc:" + addr : hostBridge,
                        path,
                        rdma,
                        netdevs,
                        List.of(),
                        "",
                        Optional.empty()));
    }

    private static PciLink link(Element o) {
        double gbytes = 0;
        try {
            String s = Xml.attr(o, "pci_link_speed");
            gbytes = s == null ? 0 : Double.parseDouble(s);
        } catch (NumberFormatException e) {
            gbytes = 0;
        }
        return PciLink.ofGigabytesPerSecond(gbytes);
    }

    /** @return {class, vendor, device} from {@code "0302 [10de:06d2] [00de:0030] a3 00"}, -1 for unknown parts */
    private static int[] pciType(String s) {
        if (s == null) {
            return new int[] {-1, -1, -1};
        }
        Matcher m = PCI_TYPE.matcher(s.trim());
        if (!m.matches()) {
            return new int[] {-1, -1, -1};
        }
        int cls = Integer.parseInt(m.group(1), 16);
        int vendor = Integer.parseInt(m.group(2), 16);
        int device = Integer.parseInt(m.group(3), 16);
        if (cls == 0 && vendor == 0) {
            // hwloc writes zeros when it could not read the config space
            return new int[] {-1, -1, -1};
        }
        return new int[] {cls, vendor, device};
    }

    private void distances(Element topology) {
        for (Element d : Xml.children(topology, "distances2")) {
            if (!"NUMANode".equals(Xml.attr(d, "type"))) {
                continue;
            }
            List<Integer> idx = new ArrayList<>();
            List<Long> values = new ArrayList<>();
            for (Element e : Xml.children(d, "indexes")) {
                for (String t : e.getTextContent().trim().split("\\s+")) {
                    if (!t.isEmpty()) {
                        idx.add(parseInt(t, -1));
                    }
                }
            }
            for (Element e : Xml.children(d, "u64values")) {
                for (String t : e.getTextContent().trim().split("\\s+")) {
                    if (!t.isEmpty()) {
                        values.add(parseLong(t));
                    }
                }
            }
            int n = idx.size();
            if (n == 0 || values.size() != n * n) {
                model.warnings.add(
                        "hwloc NUMA distance matrix has " + values.size() + " values for " + n + " nodes: ignored");
                continue;
            }
            int max = idx.stream().mapToInt(Integer::intValue).max().orElse(-1);
            for (int i = 0; i < n; i++) {
                NumaNode node = nodes.get(idx.get(i));
                if (node == null) {
                    continue;
                }
                List<Integer> row = new ArrayList<>();
                for (int j = 0; j <= max; j++) {
                    row.add(-1);
                }
                for (int j = 0; j < n; j++) {
                    row.set(idx.get(j), (int) (long) values.get(i * n + j));
                }
                nodes.put(node.id(), new NumaNode(node.id(), node.cpus(), node.memoryBytes(), row));
            }
        }
    }

    private static int parseInt(String s, int dflt) {
        try {
            return s == null ? dflt : Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    private static long parseLong(String s) {
        try {
            return s == null ? 0 : Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
