package io.rdma4j.topology;

import java.util.Optional;

/**
 * An NVMe controller: a local PCIe one, or a fabrics one (NVMe over RDMA or TCP) reached through a NIC.
 *
 * @param name kernel name ({@code nvme0}); empty when the source does not say
 * @param transport {@code pcie}, {@code rdma}, {@code tcp}, {@code fc} or {@code loop}
 * @param pci the PCI function of a PCIe controller
 * @param address fabrics address as the kernel prints it ({@code traddr=10.0.0.2,trsvcid=4420,...}); empty for PCIe
 * @param subsysnqn NVMe subsystem NQN; empty when unknown
 * @param numaNode NUMA node, -1 when unknown
 * @param via for fabrics controllers, the local NIC that reaches the target when it can be told
 */
public record NvmeController(
        String name,
        String transport,
        Optional<PciAddress> pci,
        String address,
        String subsysnqn,
        int numaNode,
        Optional<PciAddress> via) {
    /** @return true for a fabrics (remote) controller */
    public boolean fabrics() {
        return !transport.equals("pcie");
    }

    /**
     * @param key an address key such as {@code traddr}, {@code trsvcid}, {@code host_traddr}, {@code host_iface}
     * @return its value in {@link #address()}
     */
    public Optional<String> addressField(String key) {
        for (String part : address.split(",")) {
            int eq = part.indexOf('=');
            if (eq > 0 && part.substring(0, eq).trim().equals(key)) {
                return Optional.of(part.substring(eq + 1).trim());
            }
        }
        return Optional.empty();
    }
}
