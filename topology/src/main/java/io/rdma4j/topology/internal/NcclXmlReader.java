package io.rdma4j.topology.internal;

import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NumaSource;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.PciLink;
import io.rdma4j.topology.RdmaDevice;
import io.rdma4j.topology.RdmaPort;
import io.rdma4j.topology.TopologyException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.w3c.dom.Element;

/**
 * Reads NCCL's topology format ({@code NCCL_TOPO_FILE}): {@code <system><cpu numaid affinity><pci busid class vendor
 * device link_speed link_width>...}. {@code <pci>} nesting is PCIe parentage; a {@code <pci>} with children (or of
 * bridge class) is a bridge; vendor {@code 0xffff} marks a synthetic grouping switch. Each top-level {@code <pci>} of a
 * {@code <cpu>} hangs off its own host bridge: cloud VMs give every device or switch its own root.
 */
final class NcclXmlReader {
    private final Model model = new Model();
    private final Path file;

    private NcclXmlReader(Path file) {
        this.file = file;
    }

    static Model read(Path file, Element system) {
        NcclXmlReader r = new NcclXmlReader(file);
        r.model.source = "nccl-xml:" + file;
        TreeMap<Integer, NumaNode> nodes = new TreeMap<>();
        for (Element cpu : Xml.children(system, "cpu")) {
            String id = Xml.attr(cpu, "numaid");
            int numa;
            try {
                numa = id == null ? -1 : Integer.parseInt(id);
            } catch (NumberFormatException e) {
                throw new TopologyException(file + ": <cpu numaid=\"" + id + "\"> is not a number");
            }
            if (numa >= 0) {
                BitSet cpus = CpuSets.parseMask(Xml.attr(cpu, "affinity"));
                NumaNode prev = nodes.get(numa);
                if (prev != null) {
                    cpus.or(toBits(prev.cpus()));
                }
                nodes.put(numa, new NumaNode(numa, CpuSets.toList(cpus), 0, List.of()));
            }
            for (Element pci : Xml.children(cpu, "pci")) {
                PciAddress top = address(file, pci);
                r.visit(pci, "numa" + numa + "/" + top, new ArrayList<>(), numa);
            }
            for (Element nic : Xml.children(cpu, "nic")) {
                for (Element net : Xml.children(nic, "net")) {
                    r.model.warnings.add("network " + Xml.attr(net, "name") + " on NUMA " + numa
                            + " has no PCI address in " + file.getFileName() + ": not usable for RDMA placement");
                }
            }
        }
        r.model.numaNodes.addAll(nodes.values());
        return r.model;
    }

    private static BitSet toBits(List<Integer> cpus) {
        BitSet b = new BitSet();
        cpus.forEach(b::set);
        return b;
    }

    private static PciAddress address(Path file, Element pci) {
        String busid = Xml.attr(pci, "busid");
        PciAddress a = PciAddress.tryParse(busid);
        if (a == null) {
            throw new TopologyException(
                    file + ": <pci busid=\"" + busid + "\"> is not a PCI address (expected dddd:bb:dd.f)");
        }
        return a;
    }

    private void visit(Element pci, String hostBridge, List<PciBridge> path, int numa) {
        PciAddress addr = address(file, pci);
        int vendor = LinkSpeeds.hex(Xml.attr(pci, "vendor"));
        int device = LinkSpeeds.hex(Xml.attr(pci, "device"));
        int cls = LinkSpeeds.hex(Xml.attr(pci, "class"));
        PciLink link = PciLink.of(
                LinkSpeeds.gigaTransfers(Xml.attr(pci, "link_speed")), LinkSpeeds.width(Xml.attr(pci, "link_width")));
        List<Element> kids = Xml.children(pci, "pci");
        model.placements.put(addr, new Model.Placement(hostBridge, List.copyOf(path), numa));
        if (!kids.isEmpty() || Classifier.isBridge(cls)) {
            boolean synthetic = vendor == 0xffff || addr.domain() == 0xffff;
            PciBridge b = new PciBridge(addr, vendor, device, synthetic, link);
            model.bridges.put(addr, b);
            List<PciBridge> below = new ArrayList<>(path);
            below.add(b);
            for (Element k : kids) {
                visit(k, hostBridge, below, numa);
            }
            return;
        }
        List<RdmaDevice> rdma = new ArrayList<>();
        List<String> fabric = new ArrayList<>();
        List<Element> nics = Xml.children(pci, "nic");
        for (Element nic : nics) {
            for (Element net : Xml.children(nic, "net")) {
                String name = Xml.attr(net, "name");
                if (name == null) {
                    continue;
                }
                if (vendor == Classifier.HPE_CRAY || name.startsWith("cxi")) {
                    fabric.add(name); // Slingshot: a libfabric cxi device, not verbs
                    continue;
                }
                int port = 1;
                try {
                    port = Xml.attr(net, "port") == null ? 1 : Math.max(1, Integer.parseInt(Xml.attr(net, "port")));
                } catch (NumberFormatException e) {
                    port = 1;
                }
                double mbps = LinkSpeeds.leadingNumber(Xml.attr(net, "speed"));
                RdmaPort p = new RdmaPort(port, "", "", mbps / 1000.0, List.of());
                // a dual-port NIC is one verbs device listed once per port
                int at = -1;
                for (int i = 0; i < rdma.size(); i++) {
                    if (rdma.get(i).name().equals(name)) {
                        at = i;
                    }
                }
                if (at < 0) {
                    rdma.add(new RdmaDevice(name, Optional.of(addr), List.of(p)));
                } else {
                    List<RdmaPort> ports = new ArrayList<>(rdma.get(at).ports());
                    ports.add(p);
                    rdma.set(at, new RdmaDevice(name, Optional.of(addr), ports));
                }
            }
        }
        boolean gpuHint = !Xml.children(pci, "gpu").isEmpty();
        DeviceKind kind = Classifier.kind(
                vendor,
                device,
                cls,
                nics.isEmpty() ? Classifier.RdmaEvidence.UNKNOWN : Classifier.RdmaEvidence.YES,
                null,
                gpuHint);
        model.rdmaDevices.addAll(rdma);
        model.devices.put(
                addr,
                new PciDevice(
                        addr,
                        kind,
                        vendor,
                        device,
                        cls,
                        numa,
                        numa >= 0 ? NumaSource.TOPOLOGY_FILE : NumaSource.UNKNOWN,
                        List.of(),
                        link,
                        hostBridge,
                        path,
                        rdma,
                        List.of(),
                        fabric,
                        "",
                        Optional.empty()));
    }
}
