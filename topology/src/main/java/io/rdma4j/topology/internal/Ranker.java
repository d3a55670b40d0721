package io.rdma4j.topology.internal;

import io.rdma4j.topology.Level;
import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.PciBridge;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.Ranked;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * NCCL's path levels between two devices, and the ordering: level, then the climb (bridges from the location up to the
 * lowest bridge it shares with the target: traffic that turns lower in the tree shares fewer upstream links), then
 * bridges crossed in all (fewer first), then link bandwidth (more first); what still compares equal is a tie, reported
 * through {@link Ranked#tieGroup()}.
 */
public final class Ranker {
    /** Hops charged when the path is unknown (a fabrics drive with no known NIC): after every known path. */
    public static final int UNKNOWN_HOPS = 1000;

    /**
     * @param level how far
     * @param climb bridges from the location up to the lowest one it shares with the target (the whole path, plus the
     *     host bridge, when they share none; 0 from host memory)
     * @param hops bridges and host bridges crossed
     */
    public record Relation(Level level, int climb, int hops) {}

    private Ranker() {}

    /** The relation between two devices' positions. */
    public static Relation relate(PciDevice a, PciDevice b) {
        List<PciBridge> pa = a.path();
        List<PciBridge> pb = b.path();
        if (a.hostBridge().equals(b.hostBridge())) {
            int common = 0;
            while (common < pa.size()
                    && common < pb.size()
                    && pa.get(common).address().equals(pb.get(common).address())) {
                common++;
            }
            if (common == 0) {
                return new Relation(Level.PHB, pa.size(), pa.size() + pb.size() + 1);
            }
            // equal bridge counts do not make equal paths: below one switch a NIC on the GPU's own downstream port
            // (even behind a NIC's internal switch) is reached without crossing the switch, one on another port is not
            int climb = pa.size() - common;
            int hops = climb + (pb.size() - common) + 1;
            boolean sameParent = common == pa.size() && common == pb.size();
            return new Relation(sameParent ? Level.PIX : Level.PXB, climb, hops);
        }
        int hops = pa.size() + pb.size() + 2;
        int climb = pa.size() + 1;
        if (a.numaNode() >= 0 && a.numaNode() == b.numaNode()) {
            return new Relation(Level.NODE, climb, hops);
        }
        return new Relation(Level.SYS, climb, hops);
    }

    /** The relation between host memory on a NUMA node and a device. */
    public static Relation relate(int numaNode, PciDevice b) {
        int hops = b.path().size() + 1;
        return new Relation(b.numaNode() == numaNode ? Level.NODE : Level.SYS, 0, hops);
    }

    /**
     * One unranked candidate.
     *
     * @param target what is ranked
     * @param address its PCI address for display (may be null)
     * @param relation how far
     * @param bandwidth Gbit/s
     */
    public record Candidate<T>(T target, PciAddress address, Relation relation, double bandwidth) {}

    /** Sorts best first and assigns tie groups. */
    public static <T> List<Ranked<T>> rank(List<Candidate<T>> candidates) {
        List<Candidate<T>> sorted = new ArrayList<>(candidates);
        sorted.sort(
                Comparator.<Candidate<T>>comparingInt(c -> c.relation.level().ordinal())
                        .thenComparingInt(c -> c.relation.climb())
                        .thenComparingInt(c -> c.relation.hops())
                        .thenComparing(c -> -c.bandwidth)
                        .thenComparing(c -> c.address, Comparator.nullsLast(Comparator.naturalOrder())));
        List<Ranked<T>> out = new ArrayList<>(sorted.size());
        int group = -1;
        Candidate<T> prev = null;
        for (Candidate<T> c : sorted) {
            if (prev == null
                    || prev.relation.level() != c.relation.level()
                    || prev.relation.climb() != c.relation.climb()
                    || prev.relation.hops() != c.relation.hops()
                    || Double.compare(prev.bandwidth, c.bandwidth) != 0) {
                group++;
            }
            out.add(new Ranked<>(
                    c.target,
                    c.address,
                    c.relation.level(),
                    c.relation.climb(),
                    c.relation.hops(),
                    c.bandwidth,
                    group));
            prev = c;
        }
        return out;
    }
}
