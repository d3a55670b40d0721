package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPU to GPU through two transfer engines in one JVM over libfabric tcp on loopback, on the GPU machine
 * ({@code scripts/gpu-check device}): the engine takes {@link GpuBuffer}s as device memory, and since libfabric's tcp
 * provider has no FI_HMEM it stages them through registered host memory (device to host before the write is posted,
 * host to device before the notification is handed over and before a read's future completes). Skips with the probe's
 * reason where CUDA is not available; {@code --require-gpu} turns that skip into a failure on the GPU machine.
 */
@Tag("gpu")
class GpuEngineTransferTest {
    private static final long BYTES = 64L << 20;

    @Test
    void gpuToGpuThroughTheEngineStagingPath() throws Exception {
        assumeTrue(
                Cuda.isAvailable(),
                () -> "no usable GPU: " + Cuda.unavailabilityCause().getMessage());
        CudaDevice srcGpu = Cuda.device(0);
        CudaDevice dstGpu = Cuda.device(Cuda.deviceCount() > 1 ? 1 : 0);
        try (CudaContext srcCtx = srcGpu.retainPrimaryContext();
                CudaContext dstCtx = dstGpu.retainPrimaryContext();
                Arena arena = Arena.ofConfined();
                TransferEngine a = TransferEngine.builder()
                        .name("gpu-a")
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .lanesPerNic(2)
                        .build();
                TransferEngine b = TransferEngine.builder()
                        .name("gpu-b")
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .lanesPerNic(2)
                        .build()) {
            GpuBuffer src = srcCtx.allocate(BYTES);
            GpuBuffer dst = dstCtx.allocate(BYTES);
            GpuBuffer back = srcCtx.allocate(BYTES);
            MemorySegment pattern = arena.allocate(BYTES, 8);
            for (long i = 0; i < BYTES; i += 8) {
                pattern.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L + 17);
            }
            src.copyFromHost(pattern);
            LocalBuffer s = a.register(src);
            LocalBuffer d = b.register(dst);
            LocalBuffer r = a.register(back);
            assertEquals(MemoryLocation.gpu(srcGpu.pciAddress()), s.location());
            System.out.println("engine: " + a.description());
            System.out.println("engine source: " + s);
            System.out.println("engine target: " + d);
            b.publish("gpu-landing", d, Access.anyPeer());
            RemoteBuffer remote = a.peer(b.name()).buffer("gpu-landing");

            long t0 = System.nanoTime();
            a.write(s, remote, TransferOptions.tag(4242)).join();
            assertNotNull(b.awaitTag(4242, Duration.ofSeconds(60)), "the write's notification never arrived");
            long writeNanos = System.nanoTime() - t0;
            MemorySegment landed = arena.allocate(BYTES, 8);
            dst.copyToHost(landed);
            assertEquals(
                    -1,
                    landed.mismatch(pattern),
                    "GPU " + dstGpu.ordinal() + " lacks the bytes GPU " + srcGpu.ordinal() + " wrote");

            long t1 = System.nanoTime();
            a.read(r, remote).join();
            long readNanos = System.nanoTime() - t1;
            MemorySegment readBack = arena.allocate(BYTES, 8);
            back.copyToHost(readBack);
            assertEquals(-1, readBack.mismatch(pattern), "the read back into GPU " + srcGpu.ordinal() + " differs");
            assertTrue(s.toString().contains("staged") || s.toString().contains("directly"), s.toString());
            System.out.printf(
                    "engine transfer verified: %d MiB GPU %d (%s) -> GPU %d (%s) written in %.1f ms, read back in %.1f ms%n",
                    BYTES >> 20,
                    srcGpu.ordinal(),
                    srcGpu.pciAddress(),
                    dstGpu.ordinal(),
                    dstGpu.pciAddress(),
                    writeNanos / 1e6,
                    readNanos / 1e6);
            s.close();
            d.close();
            r.close();
        }
    }
}
