package io.rdma4j.topology;

/**
 * A PCIe link as the device reports it.
 *
 * @param gigaTransfersPerSecond per-lane rate (2.5, 5, 8, 16, 32, 64), 0 when unknown
 * @param width lanes, 0 when unknown
 * @param gbps usable bandwidth in Gbit/s after line encoding, 0 when unknown
 */
public record PciLink(double gigaTransfersPerSecond, int width, double gbps) {
    /** A link whose speed and width are not known. */
    public static final PciLink UNKNOWN = new PciLink(0, 0, 0);

    /** A link from its per-lane rate and width: 8b/10b encoding up to 5 GT/s, 128b/130b above. */
    public static PciLink of(double gigaTransfersPerSecond, int width) {
        if (gigaTransfersPerSecond <= 0 || width <= 0) {
            return new PciLink(Math.max(0, gigaTransfersPerSecond), Math.max(0, width), 0);
        }
        double encoding = gigaTransfersPerSecond <= 5.0 ? 0.8 : 128.0 / 130.0;
        return new PciLink(gigaTransfersPerSecond, width, round(gigaTransfersPerSecond * width * encoding));
    }

    /** A link known only by its bandwidth (hwloc reports GB/s). */
    public static PciLink ofGigabytesPerSecond(double gigabytesPerSecond) {
        return gigabytesPerSecond > 0 ? new PciLink(0, 0, round(gigabytesPerSecond * 8)) : UNKNOWN;
    }

    private static double round(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }

    /** @return true when the bandwidth is known */
    public boolean known() {
        return gbps > 0;
    }
}
