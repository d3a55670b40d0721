package io.rdma4j.engine.internal;

import io.rdma4j.engine.Plan;
import io.rdma4j.engine.PlanLane;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Chooses lanes and splits a transfer across them. Pure: it moves nothing and is shared by the live engine and by the
 * offline {@code explain} on topology files.
 *
 * <p>Candidates are (local lane, remote lane) pairs already paired rail to rail. The pairs whose worse level (local NIC
 * to source memory, remote NIC to destination memory) is the best available are kept, and among those only the ones
 * whose local level, then remote level, is also the best: a GPU's own PIX NIC is not diluted by a NODE NIC of the same
 * socket just because the peer side is NODE anyway (the NCCL rule: GPU memory leaves through its own NIC). A transfer
 * below the small threshold goes on one of them (rotating), a larger one is cut into chunks and striped over all of
 * them, each pair getting a contiguous run of chunks in proportion to its bandwidth weight.
 */
public final class Planner {
    /** One usable lane pair. */
    public record Candidate(
            int localLane,
            String localNic,
            Level localLevel,
            int remoteLane,
            String remoteNic,
            Level remoteLevel,
            double weight) {
        Level worst() {
            return Level.worse(localLevel, remoteLevel);
        }
    }

    /**
     * The chosen pairs with their contiguous byte ranges [start, start + length) of the transfer; shared by every
     * transfer given it (see {@link #assign}), so its arrays are never written after it is made.
     */
    public record Assignment(Candidate[] pairs, long[] start, long[] length, long[] chunks) {
        public int size() {
            return pairs.length;
        }
    }

    /** A striped assignment and what it was made for. */
    private record Made(List<Candidate> best, long bytes, Assignment assignment) {}

    private final long chunkBytes;
    private final long smallThreshold;
    /**
     * The last striped assignment, given again while the same ranked pairs carry the same bytes: repeated transfers of
     * one size (a batch refilled with the same blocks, the chunks of a weight sync) plan nothing new and allocate
     * nothing for it. The pairs are compared by identity: a peer's ranking is a new list whenever its lanes change.
     */
    private volatile Made last;

    public Planner(long chunkBytes, long smallThreshold) {
        if (chunkBytes < 1) {
            throw new IllegalArgumentException("chunk size must be >= 1 byte, got " + chunkBytes);
        }
        if (smallThreshold < 0) {
            throw new IllegalArgumentException("small-transfer threshold must be >= 0, got " + smallThreshold);
        }
        this.chunkBytes = chunkBytes;
        this.smallThreshold = smallThreshold;
    }

    public long chunkBytes() {
        return chunkBytes;
    }

    public long smallThreshold() {
        return smallThreshold;
    }

    /** @return the candidates at the best (worse, local, remote) levels, in rail order, or empty */
    /** Nearest first: by the worse of the two levels, then the local one, then the remote one. */
    private static final Comparator<Candidate> BEST_FIRST = Comparator.comparing(Candidate::worst)
            .thenComparing(Candidate::localLevel)
            .thenComparing(Candidate::remoteLevel);

    public static List<Candidate> best(List<Candidate> candidates) {
        if (candidates.isEmpty()) {
            return List.of();
        }
        List<Candidate> sorted = new ArrayList<>(candidates);
        sorted.sort(BEST_FIRST);
        Candidate top = sorted.getFirst();
        sorted.removeIf(c ->
                c.worst() != top.worst() || c.localLevel() != top.localLevel() || c.remoteLevel() != top.remoteLevel());
        return sorted;
    }

    /**
     * {@return whether {@code bytes} go whole on one of {@code pairs} best pairs}: below the striping threshold, within
     * one chunk, or with one pair to go on. {@link #assign} then gives that one pair.
     */
    public boolean oneLane(int pairs, long bytes) {
        return bytes < smallThreshold || pairs == 1 || bytes <= chunkBytes;
    }

    /**
     * Splits {@code bytes} over {@code best} (already filtered by {@link #best}).
     *
     * @param rotation which pair a small transfer takes (any int; taken modulo the count)
     */
    public Assignment assign(List<Candidate> best, long bytes, int rotation) {
        if (best.isEmpty()) {
            throw new IllegalArgumentException("no lane to plan on");
        }
        if (oneLane(best.size(), bytes)) {
            Candidate c = best.get(Math.floorMod(rotation, best.size()));
            return new Assignment(
                    new Candidate[] {c}, new long[] {0}, new long[] {bytes}, new long[] {chunksOf(bytes)});
        }
        Made m = last;
        if (m != null && m.best == best && m.bytes == bytes) {
            return m.assignment;
        }
        Assignment a = stripe(best, bytes);
        last = new Made(best, bytes, a);
        return a;
    }

    private Assignment stripe(List<Candidate> best, long bytes) {
        long totalChunks = chunksOf(bytes);
        int n = (int) Math.min(best.size(), totalChunks);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += best.get(i).weight();
        }
        // largest remainder apportionment of whole chunks
        long[] share = new long[n];
        double[] rem = new double[n];
        long given = 0;
        for (int i = 0; i < n; i++) {
            double exact = totalChunks * best.get(i).weight() / sum;
            share[i] = (long) Math.floor(exact);
            rem[i] = exact - share[i];
            given += share[i];
        }
        while (given < totalChunks) {
            int bi = 0;
            for (int i = 1; i < n; i++) {
                if (rem[i] > rem[bi]) {
                    bi = i;
                }
            }
            share[bi]++;
            rem[bi] = -1;
            given++;
        }
        List<Candidate> pairs = new ArrayList<>();
        List<long[]> ranges = new ArrayList<>();
        long chunkCursor = 0;
        for (int i = 0; i < n; i++) {
            if (share[i] == 0) {
                continue;
            }
            long start = chunkCursor * chunkBytes;
            long end = Math.min(bytes, (chunkCursor + share[i]) * chunkBytes);
            chunkCursor += share[i];
            pairs.add(best.get(i));
            ranges.add(new long[] {start, end - start, share[i]});
        }
        long[] st = new long[pairs.size()];
        long[] ln = new long[pairs.size()];
        long[] ch = new long[pairs.size()];
        for (int i = 0; i < st.length; i++) {
            st[i] = ranges.get(i)[0];
            ln[i] = ranges.get(i)[1];
            ch[i] = ranges.get(i)[2];
        }
        return new Assignment(pairs.toArray(new Candidate[0]), st, ln, ch);
    }

    long chunksOf(long bytes) {
        return bytes == 0 ? 1 : (bytes + chunkBytes - 1) / chunkBytes;
    }

    /** Renders an assignment as a public {@link Plan}. */
    public Plan toPlan(Assignment a, long bytes, String reason) {
        List<PlanLane> lanes = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            Candidate c = a.pairs()[i];
            lanes.add(new PlanLane(
                    c.localLane(),
                    c.localNic(),
                    c.remoteLane(),
                    c.remoteNic(),
                    c.localLevel().name(),
                    c.remoteLevel().name(),
                    a.length()[i],
                    a.chunks()[i]));
        }
        return new Plan(lanes, bytes, reason);
    }

    /** Explains why the best pairs were chosen, in one sentence fragment. */
    public String describe(List<Candidate> all, List<Candidate> best, long bytes, int used) {
        StringBuilder sb = new StringBuilder();
        Level top = best.getFirst().worst();
        sb.append(best.size())
                .append(" of ")
                .append(all.size())
                .append(" lane pair(s) at the best level ")
                .append(top);
        if (bytes < smallThreshold || used == 1 && best.size() > 1) {
            sb.append("; ")
                    .append(bytes)
                    .append(" bytes is below the ")
                    .append(smallThreshold)
                    .append("-byte striping threshold, so one lane carries it");
        } else if (used > 1) {
            sb.append("; striped in ").append(chunkBytes).append("-byte chunks weighted by link bandwidth");
        }
        return sb.toString();
    }
}
