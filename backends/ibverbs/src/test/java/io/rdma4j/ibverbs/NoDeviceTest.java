package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.Rdma4jException;
import io.rdma4j.ffi.ChildJvm;
import io.rdma4j.ibverbs.ffi.LibIbverbs;
import io.rdma4j.ibverbs.ffi.LibRdmacm;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * On a machine with rdma-core but no RDMA device: the libraries load, and the absence of devices is one clear
 * condition.
 */
class NoDeviceTest {
    private static boolean hasDevices() {
        return Files.isDirectory(Path.of("/sys/class/infiniband"))
                && Path.of("/sys/class/infiniband").toFile().list().length > 0;
    }

    @Test
    void librariesLoadAndBindTheirSymbols() {
        assertTrue(Verbs.isAvailable(), () -> "libibverbs did not load: " + Verbs.unavailabilityCause());
        assertTrue(Verbs.isRdmaCmAvailable(), () -> "librdmacm did not load: " + LibRdmacm.LIB.unavailabilityCause());
        // every exported function the binding names exists in the installed libraries
        for (var f : new io.rdma4j.ffi.NativeFunction[] {
            LibIbverbs.ibv_get_device_list,
            LibIbverbs.ibv_open_device,
            LibIbverbs.ibv_reg_mr_iova2,
            LibIbverbs.ibv_create_qp,
            LibIbverbs.ibv_modify_qp,
            LibIbverbs.ibv_query_qp,
            LibIbverbs.ibv_create_cq,
            LibIbverbs.ibv_create_srq,
            LibIbverbs.ibv_create_ah,
            LibIbverbs._ibv_query_gid_table,
            LibIbverbs.ibv_get_async_event,
            LibIbverbs.ibv_get_cq_event,
            LibIbverbs.ibv_query_port,
            LibIbverbs.ibv_query_gid,
            LibIbverbs.ibv_wc_status_str,
            LibRdmacm.rdma_create_id,
            LibRdmacm.rdma_resolve_addr,
            LibRdmacm.rdma_connect,
            LibRdmacm.rdma_accept,
            LibRdmacm.rdma_get_cm_event,
            LibRdmacm.rdma_create_qp
        }) {
            assertTrue(f.isPresent(), f.name() + " missing");
            f.handle();
        }
        assertTrue(ProtectionDomain.isDmabufSupported(), "rdma-core 44 exports ibv_reg_dmabuf_mr");
        assertEquals("remote access error", VerbsException.wcStatusText(10));
    }

    @Test
    void noDevicesIsAnEmptyListAndAClearMessageOnOpen() {
        assumeTrue(!hasDevices(), "this machine has RDMA devices");
        assertTrue(Verbs.deviceNames().isEmpty());
        try (DeviceList list = DeviceList.open()) {
            assertTrue(list.isEmpty());
            var e = assertThrows(Rdma4jException.class, () -> list.get(null));
            assertTrue(
                    e.getMessage().contains("no RDMA device") && e.getMessage().contains("rdma link add"),
                    e.getMessage());
        }
        var e = assertThrows(Rdma4jException.class, () -> Verbs.openDevice("rxe0"));
        assertTrue(e.getMessage().contains("'rxe0'"), e.getMessage());
    }

    /**
     * libibverbs prints nothing, and nothing repeats, when a process lists devices many times on a machine with none.
     */
    @Test
    void noDevicesIsNotAnErrorStorm() throws IOException, InterruptedException {
        assumeTrue(!hasDevices(), "this machine has RDMA devices");
        Process p = ChildJvm.builder(ListDevicesMain.class, "20").start();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String stderr = new String(err, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), stderr);
        assertEquals("devices=0 x20", new String(out, StandardCharsets.UTF_8).strip());
        long lines = stderr.lines()
                .filter(l -> !l.isBlank() && !l.startsWith("WARNING: "))
                .count();
        assertTrue(lines <= 1, "expected at most one line on stderr for 20 listings, got:\n" + stderr);
    }

    /** Lists devices N times and prints how many it found. */
    public static final class ListDevicesMain {
        public static void main(String[] args) {
            int n = Integer.parseInt(args[0]);
            int found = -1;
            for (int i = 0; i < n; i++) {
                found = Verbs.deviceNames().size();
            }
            System.out.println("devices=" + found + " x" + n);
        }
    }
}
