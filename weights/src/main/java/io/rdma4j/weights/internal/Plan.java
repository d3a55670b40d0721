package io.rdma4j.weights.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * What one publisher rank's plan makes each subscriber receive, and from where: per member, its incoming pieces in
 * order (a piece's index is its tag's piece number), and what it forwards onward as each piece lands.
 *
 * @param id the plan's number, carried by every tag of it
 * @param members the subscribers, in plan order
 * @param incoming per member, its pieces
 * @param forwards per member, per incoming piece, the forwards it makes when that piece lands
 */
public record Plan(int id, List<Member> members, List<List<Piece>> incoming, List<List<List<Forward>>> forwards) {
    /**
     * A piece: one group of runs of one tensor, from the publisher ({@code from == -1}) or from the member at index
     * {@code from}; its source offsets are in the publisher's tensor memory or that member's buffer.
     */
    public record Piece(int from, int tensor, Runs.Group runs) {}

    /** When its piece lands, the member writes the same runs to {@code target}'s piece, shifted by {@code delta}. */
    public record Forward(int target, int targetPiece, long delta) {}

    /** {@return bytes the publisher itself sends} */
    public long publisherBytes() {
        long n = 0;
        for (List<Piece> l : incoming) {
            for (Piece p : l) {
                n += p.from() < 0 ? p.runs().bytes() : 0;
            }
        }
        return n;
    }

    /** {@return bytes subscribers forward} */
    public long relayedBytes() {
        long n = 0;
        for (List<Piece> l : incoming) {
            for (Piece p : l) {
                n += p.from() >= 0 ? p.runs().bytes() : 0;
            }
        }
        return n;
    }

    /**
     * {@return the most hops any byte takes: 1 when the publisher writes every piece itself, 1 more for each member it
     * is relayed through}
     */
    public int hops() {
        int most = 1;
        java.util.ArrayDeque<int[]> todo = new java.util.ArrayDeque<>(); // member, piece, hops to it
        for (int m = 0; m < members.size(); m++) {
            for (int i : publisherPieces(m)) {
                todo.add(new int[] {m, i, 1});
            }
        }
        while (!todo.isEmpty()) {
            int[] at = todo.poll();
            most = Math.max(most, at[2]);
            for (Forward f : forwards.get(at[0]).get(at[1])) {
                todo.add(new int[] {f.target(), f.targetPiece(), at[2] + 1});
            }
        }
        return most;
    }

    /** {@return the pieces of member {@code m} that come from the publisher} */
    public List<Integer> publisherPieces(int m) {
        List<Integer> out = new ArrayList<>();
        List<Piece> l = incoming.get(m);
        for (int i = 0; i < l.size(); i++) {
            if (l.get(i).from() < 0) {
                out.add(i);
            }
        }
        return out;
    }
}
