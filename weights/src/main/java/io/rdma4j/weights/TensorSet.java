package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A named, ordered set of tensors with unique names, and string metadata (safetensors' {@code __metadata__}). */
public final class TensorSet {
    private final Map<String, Tensor> tensors;
    private final Map<String, String> metadata;

    /**
     * @param tensors the tensors, in order
     * @param metadata free-form string pairs
     * @throws InvalidArgumentException when two tensors share a name
     */
    public TensorSet(List<Tensor> tensors, Map<String, String> metadata) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Tensor t : tensors) {
            if (m.put(t.name(), t) != null) {
                throw new InvalidArgumentException("two tensors are named '" + t.name() + "': names must be unique");
            }
        }
        this.tensors = Collections.unmodifiableMap(m);
        this.metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
    }

    /** {@return the tensors in order} */
    public List<Tensor> tensors() {
        return new ArrayList<>(tensors.values());
    }

    /** {@return the tensor named {@code name}, or null} */
    public Tensor get(String name) {
        return tensors.get(name);
    }

    /** {@return the metadata} */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** {@return how many tensors} */
    public int size() {
        return tensors.size();
    }

    /** {@return the total bytes of every tensor} */
    public long byteSize() {
        long n = 0;
        for (Tensor t : tensors.values()) {
            n += t.byteSize();
        }
        return n;
    }
}
