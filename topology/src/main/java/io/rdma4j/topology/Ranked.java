package io.rdma4j.topology;

/**
 * One candidate (a NIC or an NVMe controller) ranked against a {@link Location}.
 *
 * @param target        the NIC ({@link PciDevice}) or the drive ({@link NvmeController})
 * @param address       PCI address used to reach it: the NIC, the PCIe NVMe function, or for a fabrics drive the NIC
 *                      that reaches it (null when not known)
 * @param level         how far it is
 * @param hops          bridges (and host bridges) crossed between the location and the target; the first tie-break
 * @param bandwidthGbps the target's PCIe link bandwidth in Gbit/s, 0 when unknown; the second tie-break
 * @param tieGroup      0 for the best entries, incremented at each change of (level, hops, bandwidth): entries with the
 *                      same value are equally good and should share the load
 * @param <T>           {@link PciDevice} or {@link NvmeController}
 */
public record Ranked<T>(T target, PciAddress address, Level level, int climb, int hops, double bandwidthGbps,
                        int tieGroup) {
}
