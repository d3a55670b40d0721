package io.rdma4j.nvmeof;

import io.rdma4j.conformance.BlockStoreConformance;
import io.rdma4j.engine.spi.BlockStoreProvider;
import io.rdma4j.engine.spi.BlockTarget;
import io.rdma4j.nvmeof.engine.NvmeofBlockStoreProvider;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;

/** The block-store conformance kit on NVMe/TCP against the scripted target (namespace 1, 4 MiB, in RAM). */
class NvmeTcpBlockStoreConformanceTest extends BlockStoreConformance {
    @TempDir
    Path home;

    private ScriptedTarget scripted;

    @Override
    protected BlockStoreProvider provider() {
        return new NvmeofBlockStoreProvider();
    }

    @Override
    protected BlockTarget startTarget() throws Exception {
        scripted = new ScriptedTarget(4 << 20);
        return new BlockTarget("tcp", "127.0.0.1", scripted.target().port(), ScriptedTarget.NQN);
    }

    @Override
    protected void stopTarget() throws Exception {
        if (scripted != null) {
            scripted.close();
        }
    }

    @Override
    protected Map<String, String> options() {
        return Map.of("identityDir", home.toString(), "ioQueues", "2", "queueDepth", "8", "keepAliveMs", "0");
    }
}
