package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.Target;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs {@code ./rdma4j bench nvme} in the test VM ({@code scripts/testvm test perf}) with its baseline: the kernel's
 * initiator of the same transport connected to the same nvmet subsystem with {@code nvme connect}: over NVMe/TCP, then
 * over NVMe/RDMA on Soft-RoCE. The numbers are printed; the guest is an emulator, so they compare the two initiators
 * side by side, not with real hardware. Under TCG the JIT warms up slowly: {@code RDMA4J_TESTVM_JAVA_OPTS=
 * -Drdma4j.bench.nvme.warmup=4} (and {@code .seconds}) lengthen both initiators' warm-up and runs alike.
 */
@Tag("testvm")
class NvmeBenchGuestTest {
    private static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), String.join(" ", cmd) + " did not finish");
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + " failed");
    }

    private static List<String> nvmeBlockDevices() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/sys/block"))) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.matches("nvme\\d+n1"))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void rdma4jNextToTheKernelInitiatorOverTcp() throws Exception {
        bench("tcp", System.getenv("RDMA4J_NVMET_TCP"));
    }

    @Test
    void rdma4jNextToTheKernelInitiatorOverRdma() throws Exception {
        bench("rdma", System.getenv("RDMA4J_NVMET_RDMA"));
    }

    private static void bench(String transport, String address) throws Exception {
        String nqn = System.getenv("RDMA4J_NVMET_NQN");
        assertTrue(
                address != null && nqn != null, "run in the test VM: scripts/testvm test --nvmet NvmeBenchGuestTest");
        Target t = transport.equals("tcp") ? Target.parseTcp(address) : Target.parseRdma(address);
        List<String> before = nvmeBlockDevices();
        run("modprobe", "nvme-" + transport);
        run("nvme", "connect", "-t", transport, "-a", t.host(), "-s", String.valueOf(t.port()), "-n", nqn);
        try {
            String dev = null;
            for (int i = 0; i < 100 && dev == null; i++) {
                dev = nvmeBlockDevices().stream()
                        .filter(d -> !before.contains(d))
                        .findFirst()
                        .orElse(null);
                if (dev == null) {
                    Thread.sleep(100);
                }
            }
            assertTrue(
                    dev != null && Files.exists(Path.of("/dev", dev)),
                    "nvme connect made no block device for namespace 1");
            int rc = new NvmeRun().run(new String[] {
                "--" + transport,
                address,
                "--nqn",
                nqn,
                "--nsid",
                "1",
                "--kernel-dev",
                "/dev/" + dev,
                "--seconds",
                System.getProperty("rdma4j.bench.nvme.seconds", "2"),
                "--warmup",
                System.getProperty("rdma4j.bench.nvme.warmup", "1")
            });
            assertEquals(0, rc);
        } finally {
            run("nvme", "disconnect", "-n", nqn);
        }
    }
}
