package io.rdma4j.nvmeof;

import io.rdma4j.conformance.BlockStoreConformance;
import io.rdma4j.engine.spi.BlockStoreProvider;
import io.rdma4j.engine.spi.BlockTarget;
import io.rdma4j.nvmeof.engine.NvmeofBlockStoreProvider;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/**
 * The block-store conformance kit against the Linux kernel target in the test VM, once over NVMe/TCP and once over
 * NVMe/RDMA (Soft-RoCE rxe0): {@code scripts/testvm test --nvmet NvmetBlockStoreConformanceGuestTest}. The VM exports
 * RDMA4J_NVMET_TCP and RDMA4J_NVMET_RDMA (address:port) and RDMA4J_NVMET_NQN. The kit overwrites the first 8 MiB of
 * namespace 1, which no other guest test reads back across classes.
 */
@Tag("testvm")
class NvmetBlockStoreConformanceGuestTest {
    private static String env(String name) {
        String v = System.getenv(name);
        if (v == null) {
            throw new IllegalStateException(name + " is not set: these tests run in the test VM"
                    + " (scripts/testvm test --nvmet NvmetBlockStoreConformanceGuestTest), which starts the kernel target"
                    + " and sets it");
        }
        return v;
    }

    /** One transport of the kernel target; the kit's tests run once per nested subclass. */
    abstract static class KernelTarget extends BlockStoreConformance {
        @TempDir
        Path home;

        abstract Target kernelTarget();

        @Override
        protected BlockStoreProvider provider() {
            return new NvmeofBlockStoreProvider();
        }

        @Override
        protected BlockTarget startTarget() {
            Target t = kernelTarget();
            String transport = t.transport() == Target.Transport.RDMA ? "rdma" : "tcp";
            return new BlockTarget(transport, t.host(), t.port(), env("RDMA4J_NVMET_NQN"));
        }

        @Override
        protected Map<String, String> options() {
            return Map.of("identityDir", home.toString(), "ioQueues", "2", "queueDepth", "16", "keepAliveMs", "0");
        }
    }

    @Nested
    class OverTcp extends KernelTarget {
        @Override
        Target kernelTarget() {
            return Target.parseTcp(env("RDMA4J_NVMET_TCP"));
        }
    }

    @Nested
    class OverRdma extends KernelTarget {
        @Override
        Target kernelTarget() {
            return Target.parseRdma(env("RDMA4J_NVMET_RDMA"));
        }
    }
}
