package io.rdma4j.weights;

import io.rdma4j.weights.internal.Member;
import io.rdma4j.weights.internal.Plan;
import io.rdma4j.weights.internal.TensorMeta;
import java.util.List;

/**
 * The text of {@link WeightPublisher#explain()}: a plan, per tensor and subscriber, as an operator reads it, with how
 * many one-sided writes carry each subscriber's part (a piece whose rows are strided at this rank but adjacent at the
 * subscriber is gathered into one).
 */
final class PlanText {
    private PlanText() {}

    static String render(
            String engineName,
            int rank,
            long epoch,
            List<TensorMeta> metas,
            List<Member> list,
            boolean relay,
            long chunk,
            Plan p,
            boolean[][] one) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                "weights plan of %s (rank %d, epoch %d): %d tensor(s), %d subscriber(s), %s, chunks of %d bytes%n",
                engineName, rank, epoch, metas.size(), list.size(), relay ? "relay chains" : "direct", chunk));
        b.append(String.format(
                "  this rank writes %d bytes, subscribers forward %d bytes%n", p.publisherBytes(), p.relayedBytes()));
        for (int t = 0; t < metas.size(); t++) {
            TensorMeta tm = metas.get(t);
            b.append(String.format(
                    "  %s %s%s: held %s%n", tm.name(), tm.dtype(), java.util.Arrays.toString(tm.shape()), tm.held()));
            for (int m = 0; m < list.size(); m++) {
                int pieces = 0;
                long bytes = 0;
                long writes = 0;
                boolean gathered = false;
                int from = -2;
                List<Plan.Piece> in = p.incoming().get(m);
                for (int i = 0; i < in.size(); i++) {
                    Plan.Piece x = in.get(i);
                    if (x.tensor() == t) {
                        pieces++;
                        bytes += x.runs().bytes();
                        writes += one[m][i] ? 1 : x.runs().count();
                        gathered |= one[m][i] && x.runs().count() > 1;
                        from = x.from();
                    }
                }
                if (pieces == 0) {
                    continue;
                }
                b.append(String.format(
                        "    -> %-24s needs %-20s %4d piece(s) %12d bytes in %d write(s)%s, %s%n",
                        list.get(m).name(),
                        list.get(m).needs().get(t),
                        pieces,
                        bytes,
                        writes,
                        gathered ? " (strided rows gathered)" : "",
                        from < 0
                                ? "direct from " + engineName
                                : "relayed by " + list.get(from).name()));
            }
        }
        return b.toString();
    }
}
