package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs {@code ./rdma4j bench nvme-volume} in the test VM ({@code scripts/testvm test --nvmet
 * NvmeVolumeBenchGuestTest}): engine writes striped over nvmet namespaces 1 and 2 next to the raw Controller on
 * namespace 1, over NVMe/TCP. The guest is an emulator: the numbers compare the paths side by side, not with hardware.
 */
@Tag("testvm")
class NvmeVolumeBenchGuestTest {
    @Test
    void engineStripedNextToTheRawControllerOverTcp() throws Exception {
        String tcp = System.getenv("RDMA4J_NVMET_TCP");
        String nqn = System.getenv("RDMA4J_NVMET_NQN");
        assertTrue(
                tcp != null && nqn != null, "run in the test VM: scripts/testvm test --nvmet NvmeVolumeBenchGuestTest");
        String volume = "tcp://" + tcp + "/" + nqn + "/1,tcp://" + tcp + "/" + nqn + "/2";
        assertEquals(0, new NvmeVolumeRun().run(new String[] {
                    "--volume", volume, "--size", String.valueOf(64L << 20), "--rounds", "3"
                }));
    }
}
