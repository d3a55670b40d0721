package io.rdma4j.weights.internal;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.weights.Shard;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Plans one publisher rank's sync: maps the bytes of the tensors it holds to the byte ranges each subscriber needs, cut
 * in pieces of at most one chunk. Direct: the publisher writes every piece itself. Relay: the subscribers that need the
 * same part of a tensor form a chain; the publisher writes to the first, and each forwards every piece to the next as
 * it lands, so each byte leaves the publisher once and the chain is pipelined piece by piece. The head of each chain
 * rotates with the tensor, spreading the sending over the members. Pure: same input, same plan.
 */
public final class Planner {
    private Planner() {}

    /**
     * {@return the plan}
     *
     * @param id its number
     * @param tensors the tensors, each with the part this rank holds
     * @param members the subscribers
     * @param relay chain members that need the same part instead of writing to each
     * @param chunk the largest piece, in bytes
     * @throws InvalidArgumentException when a member would receive more than {@link Tags#MAX_PIECES} pieces
     */
    public static Plan plan(int id, List<TensorMeta> tensors, List<Member> members, boolean relay, long chunk) {
        int n = members.size();
        List<List<Plan.Piece>> incoming = new ArrayList<>();
        List<List<List<Plan.Forward>>> forwards = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            incoming.add(new ArrayList<>());
            forwards.add(new ArrayList<>());
        }
        for (int t = 0; t < tensors.size(); t++) {
            TensorMeta tm = tensors.get(t);
            Map<Shard, List<Integer>> groups = new LinkedHashMap<>();
            for (int m = 0; m < n; m++) {
                Shard need = members.get(m).needs().get(t);
                if (need != null) {
                    groups.computeIfAbsent(need, k -> new ArrayList<>()).add(m);
                }
            }
            for (Map.Entry<Shard, List<Integer>> g : groups.entrySet()) {
                List<Integer> ms = g.getValue();
                List<Integer> chain = new ArrayList<>();
                for (int i = 0; i < ms.size(); i++) {
                    chain.add(ms.get((i + t) % ms.size()));
                }
                if (!relay) {
                    for (int m : chain) {
                        direct(tm, t, members.get(m), m, g.getKey(), chunk, incoming, forwards);
                    }
                    continue;
                }
                int head = chain.get(0);
                int first = incoming.get(head).size();
                direct(tm, t, members.get(head), head, g.getKey(), chunk, incoming, forwards);
                int last = incoming.get(head).size();
                int prev = head;
                int prevFirst = first;
                for (int c = 1; c < chain.size(); c++) {
                    int m = chain.get(c);
                    long delta = members.get(m).offsets()[t] - members.get(prev).offsets()[t];
                    int mFirst = incoming.get(m).size();
                    for (int p = 0; p < last - first; p++) {
                        Runs.Group src = incoming.get(prev).get(prevFirst + p).runs();
                        Runs.Group fwd = new Runs.Group(
                                src.dst(),
                                src.dst() + delta,
                                src.length(),
                                src.count(),
                                src.dstStride(),
                                src.dstStride());
                        int idx = add(incoming, forwards, m, new Plan.Piece(prev, t, fwd));
                        forwards.get(prev).get(prevFirst + p).add(new Plan.Forward(m, idx, delta));
                    }
                    prev = m;
                    prevFirst = mFirst;
                }
            }
        }
        for (int m = 0; m < n; m++) {
            if (incoming.get(m).size() > Tags.MAX_PIECES) {
                throw new InvalidArgumentException("subscriber "
                        + members.get(m).name() + " would receive "
                        + incoming.get(m).size() + " pieces from one publisher rank, over the " + Tags.MAX_PIECES
                        + " a tag can number: raise the chunk size");
            }
        }
        return new Plan(id, List.copyOf(members), incoming, forwards);
    }

    private static void direct(
            TensorMeta tm,
            int t,
            Member member,
            int m,
            Shard need,
            long chunk,
            List<List<Plan.Piece>> incoming,
            List<List<List<Plan.Forward>>> forwards) {
        for (Runs.Group g : Runs.common(tm.shape(), tm.dtype().byteSize(), tm.held(), 0, need, member.offsets()[t])) {
            for (Runs.Group piece : cut(g, chunk)) {
                add(incoming, forwards, m, new Plan.Piece(-1, t, piece));
            }
        }
    }

    private static int add(
            List<List<Plan.Piece>> incoming, List<List<List<Plan.Forward>>> forwards, int m, Plan.Piece p) {
        incoming.get(m).add(p);
        forwards.get(m).add(new ArrayList<>());
        return incoming.get(m).size() - 1;
    }

    /** Cuts a group into pieces of at most {@code chunk} bytes (a run longer than a chunk is cut into several). */
    static List<Runs.Group> cut(Runs.Group g, long chunk) {
        List<Runs.Group> out = new ArrayList<>();
        if (g.length() >= chunk) {
            for (int i = 0; i < g.count(); i++) {
                long s = g.src() + i * g.srcStride();
                long d = g.dst() + i * g.dstStride();
                for (long o = 0; o < g.length(); o += chunk) {
                    out.add(new Runs.Group(s + o, d + o, Math.min(chunk, g.length() - o), 1, 0, 0));
                }
            }
            return out;
        }
        int per = (int) Math.max(1, Math.min(Integer.MAX_VALUE, chunk / g.length()));
        for (int i = 0; i < g.count(); i += per) {
            int c = Math.min(per, g.count() - i);
            out.add(new Runs.Group(
                    g.src() + i * g.srcStride(),
                    g.dst() + i * g.dstStride(),
                    g.length(),
                    c,
                    c == 1 ? 0 : g.srcStride(),
                    c == 1 ? 0 : g.dstStride()));
        }
        return out;
    }
}
