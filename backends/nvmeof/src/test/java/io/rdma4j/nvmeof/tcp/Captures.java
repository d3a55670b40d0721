package io.rdma4j.nvmeof.tcp;

import io.rdma4j.ffi.TestPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Packet captures split into PDUs as each side framed them: the project's own ({@link NvmetCapture}, on the test class
 * path) and SPDK's in ../shared/nvme-tcp-traces (read only by tests marked {@code @Extended}).
 */
final class Captures {
    static final String SESSION = "nvme-tcp-session.pcap",
            DIGEST = "nvme-tcp-session-digest.pcap",
            DISCOVERY = "nvme-tcp-discovery.pcap";
    /** The port SPDK's target listened on in its captures. */
    static final int SPDK_PORT = 4420;

    /** One PDU's bytes, and the settings of its direction that decode it. */
    record Frame(byte[] bytes, PduCodec.Settings settings, boolean fromTarget) {}

    /** A connection's PDUs, each direction in order. */
    record Session(List<Frame> toTarget, List<Frame> fromTarget) {}

    private Captures() {}

    static Path file(String name) {
        return TestPaths.shared().resolve("nvme-tcp-traces").resolve(name);
    }

    /** @return the sessions of one SPDK capture in ../shared (only for tests marked {@code @Extended}) */
    static List<Session> sessions(String name) {
        Path f = file(name);
        if (!Files.isReadable(f)) {
            throw new IllegalStateException(
                    f + " is missing: the SPDK captures live in ../shared/nvme-tcp-traces" + " beside the project");
        }
        try {
            return sessions(Files.readAllBytes(f), f.toString(), SPDK_PORT);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the sessions of one of the project's own captures of the kernel target */
    static List<Session> nvmet(String name) {
        return sessions(NvmetCapture.bytes(name), name, NvmetCapture.PORT);
    }

    private static List<Session> sessions(byte[] capture, String label, int port) {
        try {
            List<Session> out = new ArrayList<>();
            for (Pcap.Connection c : Pcap.connections(capture, label, port)) {
                // The ICReq/ICResp pair (first PDU each way, never digested) says how everything after it is framed.
                Pdu.IcReq req = (Pdu.IcReq)
                        PduCodec.decode(Arrays.copyOf(c.toTarget().bytes(), 128), PduCodec.Settings.INITIAL, 0);
                Pdu.IcResp resp = (Pdu.IcResp)
                        PduCodec.decode(Arrays.copyOf(c.fromTarget().bytes(), 128), PduCodec.Settings.INITIAL, 0);
                boolean hd = req.headerDigest() && resp.headerDigest();
                boolean dd = req.dataDigest() && resp.dataDigest();
                out.add(new Session(
                        split(c.toTarget().bytes(), new PduCodec.Settings(hd, dd, resp.cpda()), false),
                        split(c.fromTarget().bytes(), new PduCodec.Settings(hd, dd, req.hpda()), true)));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Frame> split(byte[] s, PduCodec.Settings after, boolean fromTarget) {
        List<Frame> frames = new ArrayList<>();
        int off = 0;
        while (off < s.length) {
            int plen = (s[off + 4] & 0xff)
                    | (s[off + 5] & 0xff) << 8
                    | (s[off + 6] & 0xff) << 16
                    | (s[off + 7] & 0xff) << 24;
            PduCodec.Settings settings = off == 0 ? PduCodec.Settings.INITIAL : after;
            frames.add(new Frame(Arrays.copyOfRange(s, off, off + plen), settings, fromTarget));
            off += plen;
        }
        return frames;
    }
}
