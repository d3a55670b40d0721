package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.weights.internal.Runs;
import io.rdma4j.weights.internal.TensorMeta;
import io.rdma4j.weights.internal.Wire;
import java.util.List;

/**
 * What a subscriber checks of the trainer ranks' manifests before it joins: they agree, and together hold every byte.
 */
final class ManifestChecks {
    private ManifestChecks() {}

    /** The ranks must agree on names, types and full shapes; returns rank 0's list with {@code held} unused. */
    static List<TensorMeta> agreed(List<Wire.Manifest> ms) {
        List<TensorMeta> first = ms.get(0).tensors();
        for (Wire.Manifest m : ms) {
            if (m.tensors().size() != first.size()) {
                throw new InvalidArgumentException("the trainer ranks announce different tensor sets");
            }
            for (int i = 0; i < first.size(); i++) {
                TensorMeta a = first.get(i);
                TensorMeta b = m.tensors().get(i);
                if (!a.name().equals(b.name())
                        || a.dtype() != b.dtype()
                        || !java.util.Arrays.equals(a.shape(), b.shape())) {
                    throw new InvalidArgumentException("trainer ranks disagree on tensor " + i + ": " + a.name() + " "
                            + a.dtype() + java.util.Arrays.toString(a.shape()) + " vs " + b.name() + " " + b.dtype()
                            + java.util.Arrays.toString(b.shape()));
                }
            }
        }
        return first;
    }

    /** Every byte needed must be held by some rank: count the bytes each rank holds of each need. */
    static void requireCoverage(List<Wire.Manifest> ms, List<TensorMeta> metas, List<Shard> needs) {
        for (int t = 0; t < metas.size(); t++) {
            Shard need = needs.get(t);
            if (need == null) {
                continue;
            }
            long have = 0;
            for (Wire.Manifest m : ms) {
                TensorMeta tm = m.tensors().get(t);
                for (Runs.Group g : Runs.common(tm.shape(), tm.dtype().byteSize(), tm.held(), 0, need, 0)) {
                    have += g.bytes();
                }
            }
            if (have != metas.get(t).bytes(need)) {
                throw new InvalidArgumentException("tensor " + metas.get(t).name() + " " + need + ": the trainer ranks"
                        + " hold " + have + " of its " + metas.get(t).bytes(need) + " bytes (a part missing or held"
                        + " twice): subscribe to every rank, or fix their shards");
            }
        }
    }
}
