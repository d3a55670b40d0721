package io.rdma4j.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.NvmeStatusException;
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
 * {@code ./rdma4j nvme ... --rdma HOST:PORT} against the kernel target (nvmet-rdma over rxe0) in the test VM:
 * {@code scripts/testvm test --nvmet NvmeRdmaCliGuestTest}. Discover, identify, write a file and read it back.
 */
@Tag("testvm")
class NvmeRdmaCliGuestTest {
    @TempDir
    Path dir;

    private static String env(String name) {
        String v = System.getenv(name);
        if (v == null) {
            throw new IllegalStateException(name
                    + " is not set: this test runs in the test VM (scripts/testvm test --nvmet NvmeRdmaCliGuestTest)");
        }
        return v;
    }

    private static String run(String... args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            assertEquals(0, new NvmeCommand(out).run(args));
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void discoversIdentifiesWritesAndReadsOverRdma() throws Exception {
        String rdma = env("RDMA4J_NVMET_RDMA");
        String nqn = env("RDMA4J_NVMET_NQN");
        String id =
                "--hostnqn nqn.2014-08.org.nvmexpress:uuid:3f1c2a8e-1b7d-4c55-9e0a-2d6b8f4e7a11 --hostid 3f1c2a8e-1b7d-4c55-9e0a-2d6b8f4e7a11";
        String[] ident = id.split(" ");
        String discovered = run(concat(new String[] {"discover", "--rdma", rdma}, ident));
        assertTrue(discovered.lines().anyMatch(l -> l.startsWith(nqn + " rdma ")), discovered);
        String identified = run(concat(new String[] {"identify", "--rdma", rdma, "--nqn", nqn}, ident));
        assertTrue(identified.contains("subsystem " + nqn + " at rdma://"), identified);
        assertTrue(identified.contains("namespace 1: 2097152 blocks of 512 bytes"), identified);

        byte[] data = new byte[256 * 1024];
        new SplittableRandom(5).nextBytes(data);
        Path in = Files.write(dir.resolve("in.bin"), data);
        Path back = dir.resolve("back.bin");
        long lba = (768L << 20) / 512; // clear of what the library guest tests write
        String wrote = run(concat(
                new String[] {
                    "write",
                    "--rdma",
                    rdma,
                    "--nqn",
                    nqn,
                    "--nsid",
                    "1",
                    "--lba",
                    String.valueOf(lba),
                    "--in",
                    in.toString()
                },
                ident));
        assertTrue(wrote.startsWith("wrote"), wrote);
        run(concat(
                new String[] {
                    "read",
                    "--rdma",
                    rdma,
                    "--nqn",
                    nqn,
                    "--nsid",
                    "1",
                    "--lba",
                    String.valueOf(lba),
                    "--length",
                    String.valueOf(data.length),
                    "--out",
                    back.toString()
                },
                ident));
        assertArrayEquals(data, Files.readAllBytes(back));

        NvmeStatusException e = assertThrows(
                NvmeStatusException.class,
                () -> run(concat(
                        new String[] {"identify", "--rdma", rdma, "--nqn", "nqn.2026-01.io.rdma4j:no-such-subsystem"},
                        ident)));
        assertTrue(e.getMessage().contains("Connect Invalid Parameters"), e.getMessage());
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = new String[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
