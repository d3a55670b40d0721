package io.rdma4j.topology.internal;

import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NvmeController;
import io.rdma4j.topology.NvmeNamespace;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.RdmaDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What a source yields, before the public {@link io.rdma4j.topology.Topology} wraps it. Mutable while parsing. */
public final class Model {
    /**
     * Where a vendor file puts one of its elements, so that a live scan can be re-rooted under it.
     *
     * @param hostBridge its root's identity
     * @param path bridges above it, root first
     * @param numaNode its {@code <cpu numaid>}
     */
    public record Placement(String hostBridge, List<PciBridge> path, int numaNode) {}

    public String source = "";
    public final Map<PciAddress, PciDevice> devices = new TreeMap<>();
    public final Map<PciAddress, PciBridge> bridges = new TreeMap<>();
    /** Only filled by vendor-file readers: every element's place, bridges included. */
    public final Map<PciAddress, Placement> placements = new TreeMap<>();

    public final List<NumaNode> numaNodes = new ArrayList<>();
    public final List<RdmaDevice> rdmaDevices = new ArrayList<>();
    public final List<NvmeController> nvmeControllers = new ArrayList<>();
    public final List<NvmeNamespace> nvmeNamespaces = new ArrayList<>();
    public final List<String> warnings = new ArrayList<>();

    /** Lists every NVMe function that no controller entry names (vendor files, old kernels) as a PCIe controller. */
    public Model completeNvme() {
        for (PciDevice d : devices.values()) {
            if (d.kind() == io.rdma4j.topology.DeviceKind.NVME
                    && nvmeControllers.stream()
                            .noneMatch(c -> c.pci().filter(d.address()::equals).isPresent())) {
                nvmeControllers.add(new NvmeController(
                        "",
                        "pcie",
                        java.util.Optional.of(d.address()),
                        "",
                        "",
                        d.numaNode(),
                        java.util.Optional.empty()));
            }
        }
        return this;
    }
}
