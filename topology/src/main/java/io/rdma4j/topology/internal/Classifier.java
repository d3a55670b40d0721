package io.rdma4j.topology.internal;

import io.rdma4j.topology.DeviceKind;
import java.util.Set;

/** Decides a PCI function's {@link DeviceKind} from its class code, vendor and device ids and RDMA evidence. */
public final class Classifier {
    public static final int NVIDIA = 0x10de;
    public static final int AMD_ATI = 0x1002;
    public static final int MELLANOX = 0x15b3;
    public static final int AMAZON = 0x1d0f;
    public static final int HPE_CRAY = 0x17db;
    /** The PCIe switch inside ConnectX-7 and later: a bridge, never a NIC. */
    public static final int CONNECTX_INTERNAL_SWITCH = 0x1979;

    /** Whether the source says the function has an RDMA (or HPC fabric) interface. */
    public enum RdmaEvidence {
        /** A verbs device or a vendor file's {@code <nic>} is attached to it. */
        YES,
        /** The source could have said and did not (sysfs without an infiniband entry). */
        NO,
        /** The source cannot say (a vendor file that lists a network controller without vendor id). */
        UNKNOWN
    }

    /**
     * AMD/ATI chips that only ever appear as server management (BMC) video: class 0x0300 from the GPU vendor, but no
     * GPU. ES1000 (515e, 5159 variant) and Rage XL (4752).
     */
    private static final Set<Integer> AMD_BMC_VIDEO = Set.of(0x515e, 0x5159, 0x4752);

    /** Elastic Fabric Adapter device ids; Amazon's ENA (ec20, ...) is Ethernet only. */
    private static final Set<Integer> EFA = Set.of(0xefa0, 0xefa1, 0xefa2, 0xefa3);

    private Classifier() {}

    /** @return true for a PCI-to-PCI bridge (class 0x0604 or 0x0609) */
    public static boolean isBridge(int classCode) {
        int sub = classCode >> 8;
        return classCode >= 0 && (sub == 0x0604 || sub == 0x0609);
    }

    /**
     * @param vendor PCI vendor, -1 when unknown
     * @param device PCI device, -1 when unknown
     * @param classCode 24-bit class code, -1 when unknown
     * @param rdma RDMA evidence
     * @param subtype a source's own hint (hwloc's {@code subtype="NVSwitch"}), or null
     * @param gpuHint the source attaches GPU information to it (a vendor file's {@code <gpu>})
     */
    public static DeviceKind kind(
            int vendor, int device, int classCode, RdmaEvidence rdma, String subtype, boolean gpuHint) {
        if ("NVSwitch".equalsIgnoreCase(subtype)) {
            return DeviceKind.NVSWITCH;
        }
        int cls = classCode < 0 ? -1 : classCode >> 8;
        if (cls < 0) {
            if (gpuHint) {
                return DeviceKind.GPU;
            }
            return rdma == RdmaEvidence.YES ? DeviceKind.NIC : DeviceKind.OTHER;
        }
        boolean gpuVendor = vendor == NVIDIA || vendor == AMD_ATI || (vendor < 0 && gpuHint);
        switch (cls) {
            case 0x0300:
                // VGA class also covers BMC video (ASPEED, Matrox, ATI ES1000): only the GPU vendors' compute parts
                // count
                if (vendor == AMD_ATI && AMD_BMC_VIDEO.contains(device)) {
                    return DeviceKind.OTHER;
                }
                return gpuVendor || gpuHint ? DeviceKind.GPU : DeviceKind.OTHER;
            case 0x0302, 0x0380:
                return gpuVendor || gpuHint || vendor < 0 ? DeviceKind.GPU : DeviceKind.OTHER;
            case 0x1200:
                // MI300X/MI300A/MI355X are processing accelerators by class; other vendors' (Gaudi, ...) too
                return gpuVendor || gpuHint ? DeviceKind.GPU : DeviceKind.ACCELERATOR;
            case 0x0b40:
                return DeviceKind.ACCELERATOR;
            case 0x0680:
                return vendor == NVIDIA || vendor < 0 ? DeviceKind.NVSWITCH : DeviceKind.OTHER;
            case 0x0207, 0x0c06:
                // InfiniBand by class
                return DeviceKind.NIC;
            case 0x0200, 0x0280, 0x0208:
                return rdmaCapable(vendor, device, rdma) ? DeviceKind.NIC : DeviceKind.OTHER;
            default:
                if (cls >> 8 == 0x01 && (cls & 0xff) == 0x08) {
                    return DeviceKind.NVME;
                }
                return DeviceKind.OTHER;
        }
    }

    private static boolean rdmaCapable(int vendor, int device, RdmaEvidence rdma) {
        if (vendor == MELLANOX && device == CONNECTX_INTERNAL_SWITCH) {
            return false;
        }
        if (rdma == RdmaEvidence.YES) {
            return true;
        }
        if (vendor == MELLANOX || vendor == HPE_CRAY || (vendor == AMAZON && EFA.contains(device))) {
            return true;
        }
        // a vendor file that lists a network controller without saying whose it is lists it for RDMA traffic
        return rdma == RdmaEvidence.UNKNOWN && vendor < 0;
    }
}
