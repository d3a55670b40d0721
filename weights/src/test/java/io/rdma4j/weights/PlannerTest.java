package io.rdma4j.weights;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.weights.internal.Gather;
import io.rdma4j.weights.internal.Member;
import io.rdma4j.weights.internal.Plan;
import io.rdma4j.weights.internal.Planner;
import io.rdma4j.weights.internal.Runs;
import io.rdma4j.weights.internal.TensorMeta;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Executes plans on byte arrays as publisher and subscribers do, strided runs gathered into one write where the plan
 * says so and forwarded in the form the receiver saw: every subscriber must end with exactly the bytes of its part of
 * the full tensors.
 */
class PlannerTest {
    static final long[][] SHAPES = {{8, 6}, {4, 3, 10}, {5}};

    /** Byte i of tensor t's full row-major image. */
    static byte full(int t, long i) {
        return (byte) (i * 31 + t * 7 + 1);
    }

    /** The part {@code s} of tensor t, gathered from its full image: the reference. */
    static byte[] gather(int t, Shard s, int elem) {
        long[] shape = SHAPES[t];
        long[][] box = s.box(shape);
        List<Byte> out = new ArrayList<>();
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        for (long e = 0; e < n; e++) {
            long rest = e;
            boolean in = true;
            for (int d = shape.length - 1; d >= 0; d--) {
                long idx = rest % shape[d];
                rest /= shape[d];
                in &= idx >= box[0][d] && idx < box[1][d];
            }
            if (in) {
                for (int b = 0; b < elem; b++) {
                    out.add(full(t, e * elem + b));
                }
            }
        }
        byte[] r = new byte[out.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = out.get(i);
        }
        return r;
    }

    /** {@return pieces the publishers gathered into one write} */
    static int run(List<Shard[]> holders, List<Shard[]> needs, boolean relay, long chunk) {
        int elem = 2;
        int gathered = 0;
        List<byte[]> subs = new ArrayList<>();
        List<Member> members = new ArrayList<>();
        for (int m = 0; m < needs.size(); m++) {
            long[] off = new long[SHAPES.length];
            long at = 0;
            List<Shard> ns = new ArrayList<>();
            for (int t = 0; t < SHAPES.length; t++) {
                off[t] = at + 16;
                at = off[t] + gather(t, needs.get(m)[t], elem).length;
                ns.add(needs.get(m)[t]);
            }
            subs.add(new byte[(int) at]);
            members.add(new Member("s" + m, 1, at, ns, off));
        }
        for (Shard[] held : holders) {
            List<TensorMeta> metas = new ArrayList<>();
            List<byte[]> src = new ArrayList<>();
            for (int t = 0; t < SHAPES.length; t++) {
                metas.add(new TensorMeta("t" + t, DType.BF16, SHAPES[t], held[t]));
                src.add(gather(t, held[t], elem));
            }
            Plan p = Planner.plan(1, metas, members, relay, chunk);
            boolean[] host = new boolean[SHAPES.length];
            java.util.Arrays.fill(host, true);
            boolean[][] one = Gather.oneWrites(p, host);
            for (int m = 0; m < members.size(); m++) {
                for (int i = 0; i < one[m].length; i++) {
                    Runs.Group g = p.incoming().get(m).get(i).runs();
                    assertTrue(!one[m][i] || g.dstStride() == g.length(), "one write into strided bytes");
                    for (Plan.Forward f : p.forwards().get(m).get(i)) {
                        // the receiver checks a forwarded write in the form its sender received
                        assertEquals(one[m][i], one[f.target()][f.targetPiece()], "forward " + m + "/" + i);
                    }
                }
            }
            // execute: publisher pieces first, then forwards in chain order (a forward's source already landed)
            boolean progress = true;
            boolean[][] done = new boolean[members.size()][];
            for (int m = 0; m < members.size(); m++) {
                done[m] = new boolean[p.incoming().get(m).size()];
            }
            while (progress) {
                progress = false;
                for (int m = 0; m < members.size(); m++) {
                    for (int i = 0; i < done[m].length; i++) {
                        Plan.Piece x = p.incoming().get(m).get(i);
                        if (done[m][i]) {
                            continue;
                        }
                        byte[] from = x.from() < 0 ? src.get(x.tensor()) : subs.get(x.from());
                        if (x.from() >= 0 && !landed(p, done, x.from(), m, i)) {
                            continue;
                        }
                        Runs.Group g = x.runs();
                        if (x.from() < 0 && one[m][i]) {
                            // gathered: the runs into staging, then one contiguous write
                            byte[] staged = new byte[(int) g.bytes()];
                            for (int r = 0; r < g.count(); r++) {
                                System.arraycopy(
                                        from, (int) (g.src() + r * g.srcStride()), staged, (int) (r * g.length()), (int)
                                                g.length());
                            }
                            System.arraycopy(staged, 0, subs.get(m), (int) g.dst(), staged.length);
                            gathered++;
                        } else {
                            g = x.from() < 0 ? g : Gather.atReceiver(g, one[m][i]);
                            for (int r = 0; r < g.count(); r++) {
                                System.arraycopy(
                                        from,
                                        (int) (g.src() + r * g.srcStride()),
                                        subs.get(m),
                                        (int) (g.dst() + r * g.dstStride()),
                                        (int) g.length());
                            }
                        }
                        done[m][i] = true;
                        progress = true;
                    }
                }
            }
        }
        for (int m = 0; m < members.size(); m++) {
            for (int t = 0; t < SHAPES.length; t++) {
                byte[] want = gather(t, needs.get(m)[t], elem);
                byte[] got = java.util.Arrays.copyOfRange(
                        subs.get(m),
                        (int) members.get(m).offsets()[t],
                        (int) members.get(m).offsets()[t] + want.length);
                assertArrayEquals(want, got, "subscriber " + m + " tensor " + t);
            }
        }
        return gathered;
    }

    /** Whether the piece of {@code from} that forwards to ({@code m}, {@code i}) has landed. */
    static boolean landed(Plan p, boolean[][] done, int from, int m, int i) {
        List<List<Plan.Forward>> fw = p.forwards().get(from);
        for (int k = 0; k < fw.size(); k++) {
            for (Plan.Forward f : fw.get(k)) {
                if (f.target() == m && f.targetPiece() == i) {
                    return done[from][k];
                }
            }
        }
        throw new AssertionError("no forward feeds piece " + i + " of " + m);
    }

    static Shard[] all(Shard s0, Shard s1, Shard s2) {
        return new Shard[] {s0, s1, s2};
    }

    static List<Shard[]> tp(int parts, int dim0, int dim1) {
        List<Shard[]> l = new ArrayList<>();
        for (int r = 0; r < parts; r++) {
            l.add(all(
                    Shard.split(dim0, SHAPES[0][dim0], r, parts),
                    Shard.split(dim1, SHAPES[1][dim1], r, parts),
                    Shard.FULL));
        }
        return l;
    }

    @Test
    void reshardsTp2ToFullAndTp2OnOtherDimension() {
        for (boolean relay : new boolean[] {false, true}) {
            List<Shard[]> needs = new ArrayList<>();
            needs.add(all(Shard.FULL, Shard.FULL, Shard.FULL));
            needs.add(all(Shard.FULL, Shard.FULL, Shard.FULL));
            needs.addAll(tp(2, 1, 2));
            // the dim 1 halves again: their gathered pieces are relayed whole
            needs.addAll(tp(2, 1, 2));
            run(tp(2, 0, 0), needs, relay, 8);
            // pieces of several row slices: gathered
            assertTrue(run(tp(2, 0, 0), needs, relay, 64) > 0, "no piece was gathered");
        }
    }

    @Test
    void relayChainsPiecesAndSendsEachByteOnce() {
        Shard[] full = all(Shard.FULL, Shard.FULL, Shard.FULL);
        List<Shard[]> needs = List.of(full, full, full, full);
        run(List.<Shard[]>of(full), needs, true, 16);
        List<TensorMeta> metas = new ArrayList<>();
        for (int t = 0; t < SHAPES.length; t++) {
            metas.add(new TensorMeta("t" + t, DType.BF16, SHAPES[t], Shard.FULL));
        }
        List<Member> ms = new ArrayList<>();
        for (int m = 0; m < 4; m++) {
            ms.add(new Member("s" + m, 1, 1024, List.of(Shard.FULL, Shard.FULL, Shard.FULL), new long[] {0, 96, 352}));
        }
        long total = (48 + 120 + 5) * 2;
        Plan relay = Planner.plan(1, metas, ms, true, 16);
        assertEquals(total, relay.publisherBytes());
        assertEquals(3 * total, relay.relayedBytes());
        Plan direct = Planner.plan(1, metas, ms, false, 16);
        assertEquals(4 * total, direct.publisherBytes());
        assertEquals(0, direct.relayedBytes());
        // the publisher waits for confirmations in proportion to the longest chain: every byte passes all four
        assertEquals(1, direct.hops());
        assertEquals(4, relay.hops());
    }

    @Test
    void reshardsTp4ToTp2WithFewLargeRuns() {
        run(tp(4, 0, 0), tp(2, 0, 0), true, 1 << 20);
        List<Runs.Group> g = Runs.common(new long[] {8, 6}, 2, Shard.split(0, 8, 1, 4), 0, Shard.split(0, 8, 0, 2), 0);
        assertEquals(1, g.size());
        assertEquals(24, g.getFirst().bytes());
        assertEquals(24, g.getFirst().dst());
    }
}
