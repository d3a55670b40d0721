package io.rdma4j.rendezvous;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class QpInfoTest {
    private static final byte[] GID = HexFormat.of().parseHex("fe800000000000000202c9fffe0a0b0c");

    /**
     * The bytes rdma4py sends for this QP, produced by Python: {@code struct.pack("!IIH16sBB", 0x00abcdef, 0x00123456,
     * 0x0102, bytes.fromhex("fe800000000000000202c9fffe0a0b0c"), 1, 5).hex()}
     */
    private static final String RDMA4PY_BYTES =
            "00abcdef" + "00123456" + "0102" + "fe800000000000000202c9fffe0a0b0c" + "01" + "05";

    @Test
    void encodesLikePythonStructPack() {
        QpInfo q = new QpInfo(0xabcdef, 0x123456, 0x0102, GID, 1, 5);
        assertEquals(RDMA4PY_BYTES, HexFormat.of().formatHex(q.encode()));
        assertEquals(QpInfo.BYTES, q.encode().length);
    }

    @Test
    void decodesWhatPythonSends() {
        QpInfo q = QpInfo.decode(HexFormat.of().parseHex(RDMA4PY_BYTES));
        assertEquals(0xabcdef, q.qpNum());
        assertEquals(0x123456, q.psn());
        assertEquals(0x0102, q.lid());
        assertArrayEquals(GID, q.gid());
        assertEquals(1, q.port());
        assertEquals(5, q.mtu());
    }

    @Test
    void roundTripsUnsignedExtremes() {
        byte[] gid = new byte[16];
        java.util.Arrays.fill(gid, (byte) 0xff);
        QpInfo q = new QpInfo(0xFFFF_FFFFL, 0xFFFF_FFFFL, 0xFFFF, gid, 255, 255);
        QpInfo back = QpInfo.decode(q.encode());
        assertEquals(q, back);
        assertEquals(0xFFFF_FFFFL, back.qpNum());
        assertEquals(0xFFFF, back.lid());
        assertEquals(255, back.mtu());
    }

    @Test
    void rejectsTruncatedAndOverlongQpInfo() {
        byte[] good = new QpInfo(1, 2, 3, GID, 1, 5).encode();
        for (int n : new int[] {0, 1, 27, 29, 64}) {
            byte[] b = java.util.Arrays.copyOf(good, n);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(b));
            assertTrue(e.getMessage().contains("28-byte") && e.getMessage().contains(n + " bytes"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(null));
    }

    @Test
    void rejectsOutOfRangeFields() {
        assertThrows(IllegalArgumentException.class, () -> new QpInfo(-1, 0, 0, GID, 1, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpInfo(1L << 32, 0, 0, GID, 1, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpInfo(0, 0, 0x10000, GID, 1, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpInfo(0, 0, 0, GID, 256, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpInfo(0, 0, 0, new byte[15], 1, 5));
    }

    @Test
    void gidIsDefensivelyCopied() {
        byte[] gid = GID.clone();
        QpInfo q = new QpInfo(1, 2, 3, gid, 1, 5);
        gid[0] = 0;
        q.gid()[1] = 0;
        assertArrayEquals(GID, q.gid());
    }

    @Test
    void laneInfoDecodesItsQpInfoAndRefusesOtherBackends() {
        QpInfo q = new QpInfo(7, 8, 0, GID, 1, 4);
        assertEquals(q, LaneInfo.ibverbs(0, "mlx5_0", "0000:3b:00.0", 0, q).qpInfo());
        assertThrows(
                IllegalArgumentException.class, () -> Fixtures.fabricLane(0).qpInfo());
    }

    /** Python's struct module, the codec rdma4py uses, agrees with ours on random records in both directions. */
    @Test
    void agreesWithPythonStructOnRandomRecords() throws Exception {
        Process probe;
        try {
            probe = new ProcessBuilder("python3", "-c", "import struct")
                    .redirectErrorStream(true)
                    .start();
        } catch (java.io.IOException e) {
            probe = null;
        }
        assumeTrue(
                probe != null && probe.waitFor() == 0,
                "python3 is not installed; the fixed rdma4py vector above still runs");
        java.util.Random rnd = new java.util.Random(4);
        StringBuilder hex = new StringBuilder();
        java.util.List<QpInfo> sent = new java.util.ArrayList<>();
        for (int i = 0; i < 50; i++) {
            byte[] gid = new byte[16];
            rnd.nextBytes(gid);
            QpInfo q = new QpInfo(
                    rnd.nextLong(1L << 32),
                    rnd.nextLong(1L << 32),
                    rnd.nextInt(1 << 16),
                    gid,
                    rnd.nextInt(256),
                    rnd.nextInt(256));
            sent.add(q);
            hex.append(HexFormat.of().formatHex(q.encode())).append('\n');
        }
        // Python unpacks each record, prints its fields, and packs them again for us to decode
        String script = """
                import struct, sys
                for line in sys.stdin.read().split():
                    qp, psn, lid, gid, port, mtu = struct.unpack("!IIH16sBB", bytes.fromhex(line))
                    again = struct.pack("!IIH16sBB", qp, psn, lid, gid, port, mtu)
                    print(qp, psn, lid, gid.hex(), port, mtu, again.hex())
                """;
        Process p = new ProcessBuilder("python3", "-c", script)
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().write(hex.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        p.getOutputStream().close();
        java.util.List<String> lines = new String(
                        p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII)
                .lines()
                .toList();
        assertEquals(0, p.waitFor(), String.join("\n", lines));
        assertEquals(sent.size(), lines.size(), String.join("\n", lines));
        for (int i = 0; i < sent.size(); i++) {
            String[] f = lines.get(i).split(" ");
            QpInfo q = sent.get(i);
            assertEquals(q.qpNum(), Long.parseLong(f[0]));
            assertEquals(q.psn(), Long.parseLong(f[1]));
            assertEquals(q.lid(), Integer.parseInt(f[2]));
            assertEquals(HexFormat.of().formatHex(q.gid()), f[3]);
            assertEquals(q.port(), Integer.parseInt(f[4]));
            assertEquals(q.mtu(), Integer.parseInt(f[5]));
            assertEquals(q, QpInfo.decode(HexFormat.of().parseHex(f[6])));
        }
    }
}
