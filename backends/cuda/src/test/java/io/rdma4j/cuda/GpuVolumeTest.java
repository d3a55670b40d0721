package io.rdma4j.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.ScriptedTarget;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GPU memory to remote NVMe and back through the engine, on the GPU machine ({@code scripts/gpu-check device}): a
 * volume striped over two NVMe/TCP targets (nvmeof's scripted target, on loopback), 48 MiB written from a
 * {@link GpuBuffer} and read back into another. NVMe/TCP data goes through the CPU's sockets, so the engine stages the
 * device memory through host memory a piece at a time; the bytes must land on both targets where the stripe map puts
 * them and come back to the GPU unchanged. Skips with the probe's reason where CUDA is not available;
 * {@code --require-gpu} turns that skip into a failure on the GPU machine.
 */
@Tag("gpu")
class GpuVolumeTest {
    private static final long BYTES = 48L << 20;
    private static final long UNIT = 1L << 20;

    @TempDir
    Path home;

    @Test
    void gpuMemoryToAStripedNvmeVolumeAndBack() throws Exception {
        assumeTrue(
                Cuda.isAvailable(),
                () -> "no usable GPU: " + Cuda.unavailabilityCause().getMessage());
        CudaDevice gpu = Cuda.device(0);
        try (ScriptedTarget a = new ScriptedTarget(32 << 20);
                ScriptedTarget b = new ScriptedTarget(32 << 20);
                CudaContext ctx = gpu.retainPrimaryContext();
                Arena arena = Arena.ofConfined();
                TransferEngine engine = TransferEngine.builder()
                        .name("gpu-volume")
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .build();
                StorageVolume v = engine.openVolume(VolumeSpec.of(url(a), url(b))
                        .withOption("identityDir", home.toString())
                        .withOption("ioQueues", "2")
                        .withOption("queueDepth", "16")
                        .withOption("keepAliveMs", "0")
                        .withOption("ioTimeoutMs", "30000")
                        .withStripeUnit(UNIT))) {
            GpuBuffer src = ctx.allocate(BYTES);
            GpuBuffer back = ctx.allocate(BYTES);
            MemorySegment pattern = arena.allocate(BYTES, 8);
            for (long i = 0; i < BYTES; i += 8) {
                pattern.set(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L + 29);
            }
            src.copyFromHost(pattern);
            VolumeExtent e = v.extent(0, BYTES);
            try (LocalBuffer s = engine.register(src);
                    LocalBuffer r = engine.register(back)) {
                Plan plan = engine.explain(s, 0, e, 0, BYTES);
                System.out.println("volume: " + v);
                System.out.println("source: " + s);
                System.out.println("plan: " + plan.reason());

                long t0 = System.nanoTime();
                engine.write(s, 0, e, 0, BYTES, TransferOptions.DEFAULT)
                        .future()
                        .get(120, TimeUnit.SECONDS);
                long writeNanos = System.nanoTime() - t0;
                // units alternate between the two equal targets: unit 0 at a's byte 0, unit 1 at b's byte 0, ...
                assertArrayEquals(bytes(pattern, 0, 4096), a.stored(0, 4096), "unit 0 on target a");
                assertArrayEquals(bytes(pattern, UNIT, 4096), b.stored(0, 4096), "unit 1 on target b");
                assertArrayEquals(
                        bytes(pattern, BYTES - UNIT, 4096),
                        b.stored((int) (BYTES / 2 - UNIT), 4096),
                        "the last unit on target b");

                long t1 = System.nanoTime();
                engine.read(r, 0, e, 0, BYTES, TransferOptions.DEFAULT).future().get(120, TimeUnit.SECONDS);
                long readNanos = System.nanoTime() - t1;
                MemorySegment readBack = arena.allocate(BYTES, 8);
                back.copyToHost(readBack);
                assertEquals(-1, readBack.mismatch(pattern), "what came back to the GPU differs from what was written");
                System.out.printf(
                        "volume transfer verified: %d MiB GPU %s -> NVMe/TCP (2 targets) in %.1f ms (%.2f GB/s), read"
                                + " back to the GPU in %.1f ms (%.2f GB/s)%n",
                        BYTES >> 20,
                        gpu.pciAddress(),
                        writeNanos / 1e6,
                        BYTES / (double) writeNanos,
                        readNanos / 1e6,
                        BYTES / (double) readNanos);
            }
        }
    }

    private static String url(ScriptedTarget t) {
        return "tcp://127.0.0.1:" + t.target().port() + "/" + ScriptedTarget.NQN + "/1";
    }

    private static byte[] bytes(MemorySegment s, long offset, int length) {
        return s.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
    }
}
