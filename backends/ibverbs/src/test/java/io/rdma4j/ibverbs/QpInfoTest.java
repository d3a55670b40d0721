package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class QpInfoTest {
    /**
     * Golden vector produced by CPython 3.11: {@code struct.pack('!IIH16sBB', 0x123456, 0xabcdef, 0x1234, bytes(10) +
     * b'\xff\xff' + bytes([10, 0, 2, 15]), 1, 3).hex()}.
     */
    private static final String PYTHON_BYTES = "0012345600abcdef123400000000000000000000ffff0a00020f0103";

    private static final byte[] GID = HexFormat.of().parseHex("00000000000000000000ffff0a00020f");

    @Test
    void encodesExactlyLikePythonStructPack() {
        QpInfo q = new QpInfo(0x123456, 0xabcdef, 0x1234, GID, 1, 3);
        assertEquals(PYTHON_BYTES, HexFormat.of().formatHex(q.encode()));
        assertEquals(28, q.encode().length);
    }

    @Test
    void decodesPythonBytes() {
        QpInfo q = QpInfo.decode(HexFormat.of().parseHex(PYTHON_BYTES));
        assertEquals(0x123456, q.qpNum());
        assertEquals(0xabcdef, q.psn());
        assertEquals(0x1234, q.lid());
        assertArrayEquals(GID, q.gid());
        assertEquals(1, q.port());
        assertEquals(3, q.mtu());
        assertEquals(q, QpInfo.decode(q.encode()));
    }

    @Test
    void rejectsTruncatedAndOverlongQpInfo() {
        byte[] good = HexFormat.of().parseHex(PYTHON_BYTES);
        for (int len : new int[] {0, 1, 27, 29, 56}) {
            byte[] b = java.util.Arrays.copyOf(good, len);
            var e = assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(b));
            assertTrue(
                    e.getMessage().contains("exactly 28 bytes")
                            && e.getMessage().contains("got " + len),
                    e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(null));
    }

    @Test
    void rejectsOutOfRangeFieldsFromAPeer() {
        byte[] b = HexFormat.of().parseHex(PYTHON_BYTES);
        byte[] badQpn = b.clone();
        badQpn[0] = 1; // qp_num above 24 bits
        assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(badQpn));
        byte[] badMtu = b.clone();
        badMtu[27] = 9;
        var e = assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(badMtu));
        assertTrue(e.getMessage().contains("mtu"), e.getMessage());
        byte[] badPort = b.clone();
        badPort[26] = 0;
        assertThrows(IllegalArgumentException.class, () -> QpInfo.decode(badPort));
        assertThrows(IllegalArgumentException.class, () -> new QpInfo(1, 1, 0, new byte[15], 1, 3));
    }

    @Test
    void gidIsCopiedNotShared() {
        byte[] g = GID.clone();
        QpInfo q = new QpInfo(1, 2, 0, g, 1, 3);
        g[0] = 7;
        q.gid()[1] = 7;
        assertArrayEquals(GID, q.gid());
    }
}
