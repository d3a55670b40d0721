package io.rdma4j.topology;

/**
 * A bridge on the path from a host bridge down to a device: a PCIe root port, a switch port, a NIC's internal switch,
 * or a grouping hint from a vendor topology file.
 *
 * @param address its address (vendor files use {@code ffff:ff:xx.0} for synthetic ones)
 * @param vendor PCI vendor id, -1 when unknown (a bridge can be missing from {@code /sys/bus/pci/devices})
 * @param device PCI device id, -1 when unknown
 * @param synthetic true for a grouping hint (vendor {@code 0xffff}) that stands for a switch the VM hides
 * @param link its upstream link
 */
public record PciBridge(PciAddress address, int vendor, int device, boolean synthetic, PciLink link) {}
