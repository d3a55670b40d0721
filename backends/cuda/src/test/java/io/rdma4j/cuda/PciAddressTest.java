package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PciAddressTest {
    @Test
    void normalizesDriverAndNvidiaSmiFormsToSysfsForm() {
        assertEquals("0000:3b:00.0", PciAddress.normalize("0000:3B:00.0")); // cuDeviceGetPCIBusId
        assertEquals("0000:3b:00.0", PciAddress.normalize("00000000:3B:00.0")); // nvidia-smi
        assertEquals("0000:3b:00.0", PciAddress.normalize("3B:00.0")); // no domain
        assertEquals("0001:c1:1f.7", PciAddress.normalize(" 1:C1:1F.7\n"));
        assertEquals("10000:01:00.0", PciAddress.normalize("10000:01:00.0")); // VMD domains exceed 16 bits
    }

    @Test
    void rejectsWhatIsNotAPciAddressNamingTheExpectedForm() {
        for (String bad : new String[] {
            "", "GPU-1234", "0000:3b:00", "0000:3b:00.8", "0000:3b:20.0", "0000:3b0:00.0", "g000:3b:00.0"
        }) {
            var e = assertThrows(IllegalArgumentException.class, () -> PciAddress.normalize(bad), bad);
            assertTrue(e.getMessage().contains("not a PCI address"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> PciAddress.normalize(null));
    }
}
