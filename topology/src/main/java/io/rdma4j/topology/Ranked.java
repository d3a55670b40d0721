package io.rdma4j.topology;

/**
 * One candidate (a NIC or an NVMe controller) ranked against a {@link Location}.
 *
 * @param target the NIC ({@link PciDevice}) or the drive ({@link NvmeController})
 * @param address PCI address used to reach it: the NIC, the PCIe NVMe function, or for a fabrics drive the NIC that
 *     reaches it (null when not known)
 * @param level how far it is
 * @param climb bridges from the location up to the lowest bridge it shares with the target (its whole path and the host
 *     bridge when they share none; 0 from host memory); the first tie-break: below one switch, a NIC on the GPU's own
 *     downstream port beats one on another port even when both are the same number of bridges away
 * @param hops bridges (and host bridges) crossed between the location and the target; the second tie-break
 * @param bandwidthGbps the target's PCIe link bandwidth in Gbit/s, 0 when unknown; the third tie-break
 * @param tieGroup 0 for the best entries, incremented at each change of (level, climb, hops, bandwidth): entries with
 *     the same value are equally good and should share the load
 * @param <T> {@link PciDevice} or {@link NvmeController}
 */
public record Ranked<T>(
        T target, PciAddress address, Level level, int climb, int hops, double bandwidthGbps, int tieGroup) {}
