package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SPDK baseline's plumbing without SPDK: what {@code spdk_nvme_perf} printed is read into figures (a capture of its
 * output written here in its v24.01 format), and a build directory without it is refused by name.
 */
class SpdkPerfTest {
    private static String fixture(String name) throws IOException {
        try (InputStream in = SpdkPerfTest.class.getResourceAsStream("/spdk/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void totalsAndPercentilesAreReadFromItsOutput() throws IOException {
        SpdkPerf.Report r = SpdkPerf.parse(fixture("spdk_nvme_perf-randread-qd1.txt"));
        assertEquals(30517.82, r.iops(), 1e-9);
        assertEquals(32.71, r.averageUs(), 1e-9);
        assertEquals(19.75, r.minUs(), 1e-9);
        assertEquals(2519.48, r.maxUs(), 1e-9);
        assertEquals(30.302, r.p50Us(), 1e-9);
        assertEquals(76.487, r.p99Us(), 1e-9);
    }

    @Test
    void withoutTheLatencySummaryPercentilesAreUnknown() throws IOException {
        String said = fixture("spdk_nvme_perf-randread-qd1.txt");
        SpdkPerf.Report r = SpdkPerf.parse(said.substring(0, said.indexOf("Summary latency")));
        assertEquals(30517.82, r.iops(), 1e-9);
        assertTrue(Double.isNaN(r.p50Us()) && Double.isNaN(r.p99Us()), r.toString());
    }

    @Test
    void outputWithoutATotalRowIsAnErrorCarryingWhatItSaid() {
        IOException e = assertThrows(
                IOException.class, () -> SpdkPerf.parse("Initializing NVMe Controllers\nspdk_nvme_connect() failed\n"));
        assertTrue(e.getMessage().contains("no Total row"), e.getMessage());
        assertTrue(e.getMessage().contains("spdk_nvme_connect() failed"), e.getMessage());
    }

    @Test
    void aDirectoryWithoutSpdkNvmePerfIsRefusedByName(@TempDir Path dir) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SpdkBuild.in(dir));
        assertTrue(e.getMessage().contains("RDMA4J_SPDK=" + dir), e.getMessage());
        assertTrue(e.getMessage().contains("spdk_nvme_perf"), e.getMessage());
    }

    @Test
    void theBinariesAreFoundUnderBuildBin(@TempDir Path dir) throws IOException {
        Path bin = Files.createDirectories(dir.resolve("build/bin"));
        Path perf = Files.createFile(
                bin.resolve("spdk_nvme_perf"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        SpdkBuild b = SpdkBuild.in(dir);
        assertEquals(perf, b.perf());
        assertFalse(b.target().isPresent());
        IllegalStateException e = assertThrows(IllegalStateException.class, b::requireTarget);
        assertTrue(e.getMessage().contains("no nvmf_tgt"), e.getMessage());
    }

    @Test
    void theTargetConfigurationExportsTheWholeBdevOnThePort() {
        String c = SpdkTarget.config(4421, 512, 4096);
        assertTrue(c.contains("\"num_blocks\": 131072, \"block_size\": 4096"), c);
        assertTrue(c.contains("\"trsvcid\": \"4421\""), c);
        assertEquals(3, c.split("\"nqn\": \"" + SpdkTarget.NQN + "\"", -1).length - 1, c);
    }
}
