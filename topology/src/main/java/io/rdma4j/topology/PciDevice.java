package io.rdma4j.topology;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A PCI function that is not a bridge.
 *
 * @param address its address
 * @param kind what it is
 * @param vendor PCI vendor id, -1 when unknown
 * @param deviceId PCI device id, -1 when unknown
 * @param classCode 24-bit class code (e.g. {@code 0x020700}), -1 when unknown
 * @param numaNode the NUMA node it is attached to, -1 when unknown
 * @param numaSource where {@code numaNode} came from
 * @param localCpus CPUs the platform reports as local ({@code local_cpulist}); empty when unknown
 * @param link its PCIe link
 * @param hostBridge identifies its root complex ({@code pci0000:80} in sysfs); devices with equal values share a host
 *     bridge
 * @param path bridges from the host bridge down to this device, root first
 * @param rdmaDevices verbs devices on this function
 * @param netdevs network interfaces on this function
 * @param fabricNames other names a vendor file gives it (e.g. HPE Slingshot's {@code cxi0}, which is not verbs)
 * @param driver bound kernel driver, empty when unknown
 * @param localityConflict set when {@code numa_node} and {@code local_cpulist} disagree: says how and what was chosen
 */
public record PciDevice(
        PciAddress address,
        DeviceKind kind,
        int vendor,
        int deviceId,
        int classCode,
        int numaNode,
        NumaSource numaSource,
        List<Integer> localCpus,
        PciLink link,
        String hostBridge,
        List<PciBridge> path,
        List<RdmaDevice> rdmaDevices,
        List<String> netdevs,
        List<String> fabricNames,
        String driver,
        Optional<String> localityConflict) {
    public PciDevice {
        localCpus = List.copyOf(localCpus);
        path = List.copyOf(path);
        rdmaDevices = List.copyOf(rdmaDevices);
        netdevs = List.copyOf(netdevs);
        fabricNames = List.copyOf(fabricNames);
    }

    /**
     * @return the names a NIC is known and selected by ({@link NicFilter}, JSON {@code names}): its verbs devices and
     *     fabric names ({@code mlx5_0}, {@code cxi0}); its network interfaces when it has neither; empty for most other
     *     devices
     */
    public List<String> names() {
        LinkedHashSet<String> names = new LinkedHashSet<>();
        rdmaDevices.forEach(r -> names.add(r.name()));
        names.addAll(fabricNames);
        if (names.isEmpty()) {
            names.addAll(netdevs);
        }
        return List.copyOf(names);
    }

    /** @return true when the device has at least one verbs device (ibverbs can open it) */
    public boolean verbs() {
        return !rdmaDevices.isEmpty();
    }

    /** @return the fastest RDMA port rate in Gbit/s, else the PCIe link bandwidth, 0 when neither is known */
    public double lineRateGbps() {
        double r =
                rdmaDevices.stream().mapToDouble(RdmaDevice::maxRateGbps).max().orElse(0);
        return r > 0 ? r : link.gbps();
    }

    /** @return every port of every verbs device: one lane each */
    public List<RdmaPort> ports() {
        List<RdmaPort> ports = new ArrayList<>();
        rdmaDevices.forEach(r -> ports.addAll(r.ports()));
        return ports;
    }

    /** @return vendor id as 4 lower-case hex digits, or empty when unknown */
    public String vendorHex() {
        return vendor < 0 ? "" : String.format(Locale.ROOT, "%04x", vendor);
    }

    /** @return device id as 4 lower-case hex digits, or empty when unknown */
    public String deviceHex() {
        return deviceId < 0 ? "" : String.format(Locale.ROOT, "%04x", deviceId);
    }

    /** @return class code as 6 lower-case hex digits, or empty when unknown */
    public String classHex() {
        return classCode < 0 ? "" : String.format(Locale.ROOT, "%06x", classCode);
    }
}
