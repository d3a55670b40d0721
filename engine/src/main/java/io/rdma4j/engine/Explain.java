package io.rdma4j.engine;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.internal.Level;
import io.rdma4j.engine.internal.Planner;
import io.rdma4j.topology.Location;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.Ranked;
import io.rdma4j.topology.Topology;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Offline plans on topology files: which NIC of the source machine pairs with which NIC of the destination machine for
 * memory at given locations, with levels, bytes and chunks per lane, and why. No engine, no bytes moved.
 */
public final class Explain {
    private Explain() {}

    /**
     * Loads an NCCL topology XML file or a captured sysfs root (a directory holding {@code sys/}).
     *
     * @param fileOrRoot the XML file, or the directory holding {@code sys/}
     * @return the topology it describes
     * @throws io.rdma4j.InvalidArgumentException when {@code fileOrRoot} does not exist
     * @throws io.rdma4j.topology.TopologyException when it cannot be read as a topology
     */
    public static Topology topology(Path fileOrRoot) {
        if (!Files.exists(fileOrRoot)) {
            throw new InvalidArgumentException("topology " + fileOrRoot
                    + " does not exist: pass an NCCL topology XML file or a captured sysfs root");
        }
        return Files.isDirectory(fileOrRoot) ? Topology.scan(fileOrRoot) : Topology.fromNcclXml(fileOrRoot);
    }

    /**
     * Plans a write of {@code bytes} from memory at {@code srcLocation} ({@code numa:N} or a GPU's PCI address) on
     * {@code src} to {@code dstLocation} on {@code dst}: NICs ranked on each side, paired rail to rail in rank order,
     * the best-level pairs kept, striped in {@code chunkBytes} chunks weighted by link rate (one lane below
     * {@code smallThreshold}). A side without an RDMA NIC gives a plan without lanes whose reason says so.
     *
     * @param src the source machine
     * @param srcLocation where the source memory is
     * @param dst the destination machine
     * @param dstLocation where the destination memory is
     * @param bytes bytes to write
     * @param chunkBytes the chunk size of striping
     * @param smallThreshold writes below this size go on one lane
     * @return the plan: lanes, bytes and chunks per lane, and the reason
     * @throws io.rdma4j.InvalidArgumentException when {@code bytes} is negative, {@code chunkBytes} below 1,
     *     {@code smallThreshold} negative, or a location neither {@code numa:N} nor a PCI address
     */
    public static Plan plan(
            Topology src,
            String srcLocation,
            Topology dst,
            String dstLocation,
            long bytes,
            long chunkBytes,
            long smallThreshold) {
        if (bytes < 0) {
            throw new InvalidArgumentException("bytes must be >= 0, got " + bytes);
        }
        if (chunkBytes < 1 || smallThreshold < 0) {
            throw new InvalidArgumentException(
                    "chunkBytes must be >= 1 and smallThreshold >= 0, got " + chunkBytes + " and " + smallThreshold);
        }
        Location from = location(srcLocation);
        Location to = location(dstLocation);
        List<Ranked<PciDevice>> local = src.rankNics(from);
        List<Ranked<PciDevice>> remote = dst.rankNics(to);
        if (local.isEmpty() || remote.isEmpty()) {
            StringBuilder why = new StringBuilder();
            if (local.isEmpty()) {
                why.append("the source topology (").append(src.source()).append(") has no RDMA NIC");
                if (!src.devices(io.rdma4j.topology.DeviceKind.NIC).isEmpty()) {
                    why.append(" left by the NIC filter");
                }
            }
            if (remote.isEmpty()) {
                why.append(why.isEmpty() ? "" : "; ")
                        .append("the destination topology (")
                        .append(dst.source())
                        .append(") has no RDMA NIC");
            }
            why.append(
                    ": there is nothing to place the transfer on (no lane is invented); a live engine on such a machine uses its backend's own endpoints (libfabric shm or tcp) instead");
            return new Plan(List.of(), bytes, why.toString());
        }
        int n = Math.max(local.size(), remote.size());
        List<Planner.Candidate> pairs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            Ranked<PciDevice> l = local.get(k % local.size());
            Ranked<PciDevice> r = remote.get(k % remote.size());
            double w = Math.max(1, Math.min(rate(l), rate(r)));
            pairs.add(new Planner.Candidate(
                    -1,
                    l.address().toString(),
                    Level.valueOf(l.level().name()),
                    -1,
                    r.address().toString(),
                    Level.valueOf(r.level().name()),
                    w));
        }
        // rail to rail: a NIC appears in at most one pair per side while unpaired NICs remain
        List<Planner.Candidate> best = dedupe(Planner.best(pairs));
        Planner planner = new Planner(chunkBytes, smallThreshold);
        Planner.Assignment a = planner.assign(best, bytes, 0);
        String why = srcLocation + " on the source has " + local.size() + " NIC(s), best "
                + local.getFirst().address() + " at "
                + local.getFirst().level() + "; " + dstLocation + " on the destination has " + remote.size()
                + " NIC(s), best "
                + remote.getFirst().address() + " at " + remote.getFirst().level()
                + "; paired rail to rail in rank order; "
                + planner.describe(pairs, best, bytes, a.size());
        return planner.toPlan(a, bytes, why);
    }

    private static double rate(Ranked<PciDevice> r) {
        double line = r.target().lineRateGbps();
        return line > 0 ? line : r.bandwidthGbps();
    }

    private static List<Planner.Candidate> dedupe(List<Planner.Candidate> in) {
        List<Planner.Candidate> out = new ArrayList<>();
        for (Planner.Candidate c : in) {
            boolean dup = out.stream()
                    .anyMatch(o ->
                            o.localNic().equals(c.localNic()) && o.remoteNic().equals(c.remoteNic()));
            if (!dup) {
                out.add(c);
            }
        }
        return out;
    }

    private static Location location(String text) {
        try {
            return Location.parse(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException(e.getMessage(), e);
        }
    }
}
