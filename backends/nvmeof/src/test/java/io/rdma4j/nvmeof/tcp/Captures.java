package io.rdma4j.nvmeof.tcp;

import io.rdma4j.ffi.TestPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The SPDK captures in ../shared/nvme-tcp-traces, split into PDUs as each side framed them. */
final class Captures {
    static final String SESSION = "nvme-tcp-session.pcap", DIGEST = "nvme-tcp-session-digest.pcap", DISCOVERY = "nvme-tcp-discovery.pcap";

    /** One PDU's bytes, and the settings of its direction that decode it. */
    record Frame(byte[] bytes, PduCodec.Settings settings, boolean fromTarget) {
    }

    /** A connection's PDUs, each direction in order. */
    record Session(List<Frame> toTarget, List<Frame> fromTarget) {
    }

    private Captures() {
    }

    static Path file(String name) {
        return TestPaths.shared().resolve("nvme-tcp-traces").resolve(name);
    }

    static List<Session> sessions(String name) {
        try {
            Path f = file(name);
            if (!Files.isReadable(f)) {
                throw new IllegalStateException(f + " is missing: the golden captures live in ../shared/nvme-tcp-traces beside the project");
            }
            List<Session> out = new ArrayList<>();
            for (Pcap.Connection c : Pcap.connections(f, 4420)) {
                // The ICReq/ICResp pair (first PDU each way, never digested) says how everything after it is framed.
                Pdu.IcReq req = (Pdu.IcReq) PduCodec.decode(Arrays.copyOf(c.toTarget().bytes(), 128), PduCodec.Settings.INITIAL, 0);
                Pdu.IcResp resp = (Pdu.IcResp) PduCodec.decode(Arrays.copyOf(c.fromTarget().bytes(), 128), PduCodec.Settings.INITIAL, 0);
                boolean hd = req.headerDigest() && resp.headerDigest();
                boolean dd = req.dataDigest() && resp.dataDigest();
                out.add(new Session(split(c.toTarget().bytes(), new PduCodec.Settings(hd, dd, resp.cpda()), false),
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
            int plen = (s[off + 4] & 0xff) | (s[off + 5] & 0xff) << 8 | (s[off + 6] & 0xff) << 16 | (s[off + 7] & 0xff) << 24;
            frames.add(new Frame(Arrays.copyOfRange(s, off, off + plen), off == 0 ? PduCodec.Settings.INITIAL : after, fromTarget));
            off += plen;
        }
        return frames;
    }
}
