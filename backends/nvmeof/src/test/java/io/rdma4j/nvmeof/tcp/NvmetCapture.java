package io.rdma4j.nvmeof.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.SplittableRandom;

/**
 * The project's own golden capture: this initiator against the Linux kernel target ({@code nvmet}, TCP transport) of
 * the test VM, recorded with tcpdump on the host's loopback by {@link RecordNvmetCapture}. The files and how they were
 * made: {@code src/test/resources/nvme-tcp/nvmet/README.md}.
 */
final class NvmetCapture {
    static final String SESSION = "nvmet-tcp-session.pcap",
            DIGEST = "nvmet-tcp-session-digest.pcap",
            DISCOVERY = "nvmet-tcp-discovery.pcap";
    /** The host port the guest's target was forwarded to ({@code scripts/testvm serve --nvmet}'s default). */
    static final int PORT = 14420;
    /** The test VM's subsystem ({@code RDMA4J_NVMET_NQN}). */
    static final String NQN = "nqn.2026-01.io.rdma4j:testvm";

    static final String HOST_NQN = "nqn.2026-01.io.rdma4j:golden-capture";
    static final String HOST_ID = "5a1e0c0d-6e76-4d65-8074-637063617031";
    /** {LBA, bytes} of each write (512-byte blocks): one in-capsule, one too large for the capsule (R2T). */
    static final int[][] WRITES = {{0, 4096}, {64, 65536}};

    private NvmetCapture() {}

    /** @return the bytes written at {@code lba}: a function of the extent alone, so a test can predict them */
    static byte[] pattern(int lba, int length) {
        byte[] b = new byte[length];
        new SplittableRandom(lba * 1_000_003L + length).nextBytes(b);
        return b;
    }

    /** @return one of the capture files, from the test class path */
    static byte[] bytes(String name) {
        String path = "/nvme-tcp/nvmet/" + name;
        try (InputStream in = NvmetCapture.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException(path + " is not on the test class path (src/test/resources)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
