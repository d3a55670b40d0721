package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CudaVisibleDevicesTest {
    @Test
    void unsetShowsEveryGpu() {
        assertNull(CudaVisibleDevices.parse(null));
        assertTrue(CudaVisibleDevices.describe(null).contains("unset"));
    }

    @Test
    void listsOrdinalsAndUuidsInTheGivenOrder() {
        assertEquals(List.of("2", "1"), CudaVisibleDevices.parse("2,1"));
        assertEquals(List.of("GPU-8e6a2c3f", "0"), CudaVisibleDevices.parse("GPU-8e6a2c3f, 0"));
        assertEquals(
                List.of("MIG-4f5b1c2a-0c2e-5b7e-8a4e-1c6c2a2b9b1d"),
                CudaVisibleDevices.parse("MIG-4f5b1c2a-0c2e-5b7e-8a4e-1c6c2a2b9b1d"));
        assertTrue(CudaVisibleDevices.describe("2,1").contains("ordinals 0..1: 2, 1"));
    }

    @Test
    void firstInvalidEntryEndsTheList() {
        assertEquals(List.of("0", "2"), CudaVisibleDevices.parse("0,2,-1,1"));
        assertEquals(List.of(), CudaVisibleDevices.parse("-1"));
        assertEquals(List.of(), CudaVisibleDevices.parse(""));
        assertEquals(List.of("1"), CudaVisibleDevices.parse("1,,0"));
        assertEquals(List.of(), CudaVisibleDevices.parse("nvidia0"));
        assertTrue(CudaVisibleDevices.describe("").contains("hides every GPU"));
    }
}
