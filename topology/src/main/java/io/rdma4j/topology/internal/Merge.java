package io.rdma4j.topology.internal;

import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NumaSource;
import io.rdma4j.topology.NvmeController;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.RdmaDevice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Applies a vendor topology file over a sysfs scan, as NCCL applies {@code NCCL_TOPO_FILE}: the file's structure wins
 * for what it names. A device the file lists takes the file's host bridge, bridges and NUMA node; a device below a
 * bridge the file lists is re-rooted under that bridge's place in the file (p5: the GPU the file omits lands in the
 * switch with its four EFAs). Devices only the file names are left out with a warning: a file for another machine type
 * must not invent NICs. Attributes (class, ids, links, verbs devices) stay those of sysfs, which reads the hardware.
 */
public final class Merge {
    private Merge() {}

    public static Model apply(Model sysfs, Model file) {
        Model out = new Model();
        out.source = sysfs.source + "+" + file.source;
        out.warnings.addAll(sysfs.warnings);
        out.warnings.addAll(file.warnings);
        out.bridges.putAll(sysfs.bridges);
        file.bridges.forEach(out.bridges::putIfAbsent);
        for (PciDevice d : sysfs.devices.values()) {
            out.devices.put(d.address(), graft(d, file, out.warnings));
        }
        // a file names devices of the machine it was written for: one this machine lacks is not invented
        List<String> absent = file.devices.keySet().stream()
                .filter(a -> !sysfs.devices.containsKey(a))
                .map(PciAddress::toString)
                .toList();
        if (!absent.isEmpty()) {
            out.warnings.add("the topology file names " + absent.size() + " device(s) this machine does not have ("
                    + String.join(", ", absent.subList(0, Math.min(8, absent.size())))
                    + (absent.size() > 8 ? ", ..." : "")
                    + "): ignored; is it the file for this machine type?");
        }
        Set<Integer> ids = sysfs.numaNodes.stream().map(NumaNode::id).collect(Collectors.toSet());
        out.numaNodes.addAll(sysfs.numaNodes);
        for (NumaNode n : file.numaNodes) {
            if (!ids.contains(n.id())) {
                out.numaNodes.add(n);
            }
        }
        out.numaNodes.sort((a, b) -> Integer.compare(a.id(), b.id()));
        Map<String, RdmaDevice> rdma = new LinkedHashMap<>();
        sysfs.rdmaDevices.forEach(r -> rdma.put(r.name(), r));
        file.rdmaDevices.forEach(r -> rdma.putIfAbsent(r.name(), r));
        out.rdmaDevices.addAll(rdma.values());
        for (NvmeController c : sysfs.nvmeControllers) {
            int numa = c.pci().map(out.devices::get).map(PciDevice::numaNode).orElse(c.numaNode());
            out.nvmeControllers.add(
                    new NvmeController(c.name(), c.transport(), c.pci(), c.address(), c.subsysnqn(), numa, c.via()));
        }
        out.nvmeNamespaces.addAll(sysfs.nvmeNamespaces);
        return out;
    }

    private static PciDevice graft(PciDevice d, Model file, List<String> warnings) {
        Model.Placement p = file.placements.get(d.address());
        List<PciBridge> path;
        if (p != null) {
            path = p.path();
        } else {
            int at = -1;
            for (int i = d.path().size() - 1; i >= 0; i--) {
                if (file.placements.containsKey(d.path().get(i).address())) {
                    at = i;
                    break;
                }
            }
            if (at < 0) {
                return d;
            }
            PciBridge b = d.path().get(at);
            p = file.placements.get(b.address());
            path = new ArrayList<>(p.path());
            path.add(file.bridges.getOrDefault(b.address(), b));
            path.addAll(d.path().subList(at + 1, d.path().size()));
        }
        int numa = d.numaNode();
        NumaSource source = d.numaSource();
        if (p.numaNode() >= 0) {
            if (numa >= 0 && numa != p.numaNode()) {
                warnings.add(d.address() + ": sysfs says NUMA node " + numa + ", the topology file says " + p.numaNode()
                        + "; using the file");
            }
            numa = p.numaNode();
            source = NumaSource.TOPOLOGY_FILE;
        }
        PciDevice fromFile = file.devices.get(d.address());
        List<RdmaDevice> rdma = d.rdmaDevices();
        List<String> fabric = d.fabricNames();
        if (fromFile != null && rdma.isEmpty()) {
            rdma = fromFile.rdmaDevices();
        }
        if (fromFile != null && fabric.isEmpty()) {
            fabric = fromFile.fabricNames();
        }
        PciAddress a = d.address();
        return new PciDevice(
                a,
                d.kind(),
                d.vendor(),
                d.deviceId(),
                d.classCode(),
                numa,
                source,
                d.localCpus(),
                d.link(),
                p.hostBridge(),
                path,
                rdma,
                d.netdevs(),
                fabric,
                d.driver(),
                d.localityConflict());
    }
}
