package io.rdma4j.weights;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdma4j.InvalidArgumentException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Fuzz target for the safetensors header parser: a model file is untrusted input (a download, a peer's checkpoint). The
 * parser may refuse an image only with {@link InvalidArgumentException}; anything else (an index out of bounds, a
 * negative size, an allocation sized by the header) is a finding, and every tensor it accepts must lie inside the
 * image. {@code ./rdma4j test} replays the committed inputs under
 * {@code src/test/resources/io/rdma4j/weights/SafetensorsFuzzTestInputs/}; {@code ./rdma4j fuzz header} runs a
 * campaign.
 */
class SafetensorsFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void header(byte[] input) {
        MemorySegment image = MemorySegment.ofArray(input);
        TensorSet set;
        try {
            set = Safetensors.parse(image, "fuzz input");
        } catch (InvalidArgumentException refused) {
            return; // the documented refusal
        }
        for (Tensor t : set.tensors()) {
            MemorySegment m = t.host();
            if (m.byteSize() != Tensor.byteSize(t.dtype(), t.shape())) {
                throw new AssertionError(t.name() + ": " + m.byteSize() + " bytes for its dtype and shape");
            }
            if (m.byteSize() > 0) {
                // inside the image: reading its last byte must not fault
                m.get(ValueLayout.JAVA_BYTE, m.byteSize() - 1);
            }
        }
    }
}
