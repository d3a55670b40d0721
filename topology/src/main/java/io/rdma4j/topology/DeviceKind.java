package io.rdma4j.topology;

import java.util.Locale;

/** What a PCI function is, for placement purposes. Bridges are not devices: they form {@link PciDevice#path()}. */
public enum DeviceKind {
    /** NVIDIA or AMD GPU (class 0x0300, 0x0302, 0x0380 or 0x1200 from a GPU vendor; BMC video chips excluded). */
    GPU,
    /** Another co-processor: Xeon Phi (class 0x0b40), processing accelerators (0x1200) from other vendors. */
    ACCELERATOR,
    /** A network controller with an RDMA or HPC fabric capability. */
    NIC,
    /** An NVMe controller (class 0x0108). */
    NVME,
    /** An NVIDIA NVSwitch (class 0x0680): neither GPU nor NIC. */
    NVSWITCH,
    /** Anything else. */
    OTHER;

    /** @return the lower-case name used in JSON and on the command line */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
