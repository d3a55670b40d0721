package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.ibverbs.Verbs;
import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NVMe/RDMA on a host without an RDMA device: one clear error naming the fixes, before any native resource is made. */
class NoRdmaDeviceTest {
    @TempDir
    Path home;

    private static boolean hasDevices() {
        String[] d = new File("/sys/class/infiniband").list();
        return d != null && d.length > 0;
    }

    @Test
    void parsesRdmaTargets() {
        assertEquals(Target.rdma("10.0.2.15", 4420), Target.parseRdma("10.0.2.15"));
        assertEquals(Target.rdma("10.0.2.15", 4421), Target.parseRdma("10.0.2.15:4421"));
        assertEquals("rdma://10.0.2.15:4420", Target.parseRdma("10.0.2.15").toString());
        assertThrows(IllegalArgumentException.class, () -> Target.parseRdma("10.0.2.15:x"));
    }

    @Test
    void connectingWithoutAnRdmaDeviceSaysSoAndNamesTheFixes() {
        assumeTrue(Verbs.isAvailable() && !hasDevices(), "this machine has RDMA devices (or no libibverbs)");
        ConnectOptions o = ConnectOptions.defaults()
                .withIdentity(HostIdentity.persistent(home))
                .withConnectTimeout(Duration.ofSeconds(2));
        NvmeConnectionException e = assertThrows(
                NvmeConnectionException.class,
                () -> Controller.connect(Target.rdma("127.0.0.1", 4420), "nqn.2026-01.io.rdma4j:none", o));
        assertTrue(
                e.getMessage().contains("no RDMA device")
                        && e.getMessage().contains("rdma link add")
                        && e.getMessage().contains("--tcp"),
                e.getMessage());
        e = assertThrows(NvmeConnectionException.class, () -> Controller.discover(Target.rdma("127.0.0.1", 4420), o));
        assertTrue(e.getMessage().contains("no RDMA device"), e.getMessage());
    }
}
