package io.rdma4j.topology;

import java.util.List;
import java.util.Optional;

/**
 * A verbs device from {@code /sys/class/infiniband} (or a {@code <net>} of a vendor topology file).
 *
 * @param name device name, e.g. {@code mlx5_0}
 * @param pci the PCI function it belongs to; empty for software or bus-less devices (e.g. Xeon Phi's {@code scif0})
 * @param ports its ports
 */
public record RdmaDevice(String name, Optional<PciAddress> pci, List<RdmaPort> ports) {
    public RdmaDevice {
        ports = List.copyOf(ports);
    }

    /** @return the fastest port rate in Gbit/s, 0 when unknown */
    public double maxRateGbps() {
        return ports.stream().mapToDouble(RdmaPort::rateGbps).max().orElse(0);
    }
}
