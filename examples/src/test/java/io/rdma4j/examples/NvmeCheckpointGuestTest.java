package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The NvmeCheckpoint example against the kernel target in the test VM ({@code scripts/testvm test --nvmet
 * NvmeCheckpointGuestTest}), both ways: straight to namespace 1, and through the engine onto a volume striped over
 * namespaces 1 and 2. The example throws when a restored tensor differs.
 */
@Tag("testvm")
class NvmeCheckpointGuestTest {
    @Test
    void checkpointsAndRestoresStraightAndThroughTheEngine() {
        String tcp = System.getenv("RDMA4J_NVMET_TCP");
        String nqn = System.getenv("RDMA4J_NVMET_NQN");
        assertTrue(
                tcp != null && nqn != null, "run in the test VM: scripts/testvm test --nvmet NvmeCheckpointGuestTest");
        // clear of what the other guest tests write: namespace 1 at 400 MiB; the volume at 600 MiB (zone 1, namespace 1
        // at 344 MiB)
        NvmeCheckpoint.main(new String[] {tcp, nqn, "1", String.valueOf((400L << 20) / 512)});
        NvmeCheckpoint.main(new String[] {
            "--volume",
            "tcp://" + tcp + "/" + nqn + "/1,tcp://" + tcp + "/" + nqn + "/2",
            String.valueOf((600L << 20) / 4096)
        });
    }
}
