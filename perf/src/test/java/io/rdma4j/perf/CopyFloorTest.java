package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The weights bench's copy floor copies what it times, in every thread, and refuses a negative size. */
class CopyFloorTest {
    @Test
    void threadsCopyTheirBytesAndTheTimeIsMeasured() throws Exception {
        // each thread's copy is checked against the source afterwards; a wrong copy throws
        double one = CopyFloor.seconds(12L << 20, 1);
        double three = CopyFloor.seconds(12L << 20, 3);
        assertTrue(one > 0 && Double.isFinite(one), "one thread: " + one);
        assertTrue(three > 0 && Double.isFinite(three), "three threads: " + three);
    }

    @Test
    void aNegativeSizeIsRefused() {
        assertThrows(RuntimeException.class, () -> CopyFloor.seconds(-1, 1));
    }
}
