package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.Sqe;
import java.util.ArrayList;
import java.util.List;

/**
 * A command seen in a golden capture with the PDUs that answered it and its completion; also the decoding of a
 * capture's frames, shared by the tests on the project's own nvmet capture and on SPDK's.
 */
record Exchange(Pdu.CapsuleCmd cmd, List<Pdu> replies, Cqe completion) {
    /** The largest data payload the golden tests accept in one PDU. */
    static final int MAX_DATA = 1 << 20;

    int opcode() {
        return Sqe.opcode(cmd.sqe());
    }

    /** The data of every C2HData reply, in order. */
    byte[] c2hData() {
        List<byte[]> parts = replies.stream()
                .filter(p -> p instanceof Pdu.C2HData)
                .map(p -> ((Pdu.C2HData) p).data())
                .toList();
        byte[] out = new byte[parts.stream().mapToInt(a -> a.length).sum()];
        int o = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, o, p.length);
            o += p.length;
        }
        return out;
    }

    /** Decodes each frame as the side that sent it framed it. */
    static List<Pdu> decodeAll(List<Captures.Frame> frames) {
        List<Pdu> out = new ArrayList<>();
        for (Captures.Frame f : frames) {
            out.add(PduCodec.decode(f.bytes(), f.settings(), MAX_DATA));
        }
        return out;
    }
}
