package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./rdma4j nvme checkpoint|restore --volume ...} against the kernel target in the test VM ({@code scripts/testvm
 * test --nvmet NvmeVolumeCliGuestTest}): files checkpointed through the engine onto a volume striped over namespaces 1
 * and 2 (4 KiB blocks, 256 KiB stripes), restored and compared byte for byte.
 */
@Tag("testvm")
class NvmeVolumeCliGuestTest {
    @TempDir
    Path dir;

    private static String run(String... args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            assertEquals(0, new NvmeCommand(out).run(args));
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void checkpointsAndRestoresFilesThroughAStripedVolume() throws Exception {
        String tcp = System.getenv("RDMA4J_NVMET_TCP");
        String nqn = System.getenv("RDMA4J_NVMET_NQN");
        if (tcp == null || nqn == null) {
            throw new IllegalStateException(
                    "RDMA4J_NVMET_TCP / RDMA4J_NVMET_NQN are not set: this test runs in the test VM"
                            + " (scripts/testvm test --nvmet NvmeVolumeCliGuestTest)");
        }
        String volume = "tcp://" + tcp + "/" + nqn + "/1,tcp://" + tcp + "/" + nqn + "/2";
        byte[] a = new byte[3 << 20];
        byte[] b = new byte[4097]; // a partial last block
        new SplittableRandom(1).nextBytes(a);
        new SplittableRandom(2).nextBytes(b);
        Path fa = Files.write(dir.resolve("weights.bin"), a);
        Path fb = Files.write(dir.resolve("bias.bin"), b);
        String lba = String.valueOf(
                (480L << 20) / 4096); // volume blocks are 4 KiB (namespace 2's); clear of the other guest tests
        String wrote =
                run("checkpoint", "--volume", volume, "--stripe", "262144", "--lba", lba, fa.toString(), fb.toString());
        System.out.print(wrote);
        assertTrue(wrote.contains("checkpointed 3149825 bytes"), wrote);
        assertTrue(wrote.lines().anyMatch(l -> l.startsWith("namespace tcp://") && l.contains(" nsid 2: ")), wrote);
        Path out = dir.resolve("restored");
        String restored =
                run("restore", "--volume", volume, "--stripe", "262144", "--lba", lba, "--out", out.toString());
        System.out.print(restored);
        assertTrue(restored.contains("weights.bin 3145728 bytes crc32c") && restored.contains("verified"), restored);
        assertArrayEquals(a, Files.readAllBytes(out.resolve("weights.bin")));
        assertArrayEquals(b, Files.readAllBytes(out.resolve("bias.bin")));
    }
}
