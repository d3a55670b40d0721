package io.rdma4j.nvmeof.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Le;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Untrusted input: every malformed PDU is refused with a message naming the field. */
class PduCodecTest {
    private static final PduCodec.Settings DIGESTS = new PduCodec.Settings(true, true, 0);
    private static final PduCodec.Settings PLAIN = new PduCodec.Settings(false, false, 0);

    private static String reject(byte[] b, PduCodec.Settings s) {
        return assertThrows(NvmeProtocolException.class, () -> PduCodec.decode(b, s, 1 << 20))
                .getMessage();
    }

    private static byte[] c2h(PduCodec.Settings s) {
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 0x5a);
        return PduCodec.encode(new Pdu.C2HData(7, 0, true, true, data), s);
    }

    @Test
    void termRequestsRoundTripWithTheOffendingHeader() {
        byte[] header = new byte[24];
        Arrays.fill(header, (byte) 3);
        for (boolean fromController : List.of(true, false)) {
            Pdu.TermReq t = new Pdu.TermReq(fromController, 3, 0, header);
            byte[] b = PduCodec.encode(t, DIGESTS);
            assertEquals(fromController ? Pdu.C2H_TERM_REQ : Pdu.H2C_TERM_REQ, b[0]);
            assertEquals(0, b[1], "TermReqs carry no digests");
            assertEquals(48, Le.i32(b, 4));
            assertEquals(t, PduCodec.decode(b, DIGESTS, 0));
            assertEquals("Header Digest Error", t.fesName());
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> PduCodec.encode(new Pdu.TermReq(false, 1, 0, new byte[129]), PLAIN));
    }

    @Test
    void alignsDataToTheNegotiatedPduDataAlignment() {
        byte[] b = PduCodec.encode(new Pdu.H2CData(1, 2, 0, true, new byte[100]), new PduCodec.Settings(true, true, 7));
        assertEquals(32, b[3] & 0xff, "24-byte header + 4-byte digest, padded to a multiple of 32");
        assertEquals(32 + 100 + 4, b.length);
        Pdu p = PduCodec.decode(b, new PduCodec.Settings(true, true, 7), 1 << 20);
        assertArrayEquals(new byte[100], ((Pdu.H2CData) p).data());
        assertTrue(reject(b, new PduCodec.Settings(true, true, 15)).contains("multiple of 64"));
    }

    @Test
    void rejectsBadHeaderAndDataDigests() {
        byte[] b = c2h(DIGESTS);
        byte[] badHeader = b.clone();
        badHeader[24] ^= 1;
        assertTrue(reject(badHeader, DIGESTS).contains("header digest mismatch"));
        byte[] badData = b.clone();
        badData[100] ^= 1;
        assertTrue(reject(badData, DIGESTS).contains("data digest mismatch"));
        assertTrue(reject(b, PLAIN).contains("header digests were not negotiated"));
        assertTrue(reject(c2h(PLAIN), DIGESTS).contains("lacks the header digest"));
    }

    @Test
    void rejectsImpossibleLengthsTypesFlagsAndOffsets() {
        byte[] b = c2h(PLAIN);
        byte[] t = b.clone();
        t[0] = 0x0a;
        assertTrue(reject(t, PLAIN).contains("not an NVMe/TCP PDU type"));
        t = b.clone();
        t[2] = 72;
        assertTrue(reject(t, PLAIN).contains("HLEN 72"));
        t = b.clone();
        t[1] |= 0x10;
        assertTrue(reject(t, PLAIN).contains("flags"));
        t = b.clone();
        t[1] = Pdu.FLAG_SUCCESS;
        assertTrue(reject(t, PLAIN).contains("SUCCESS flag without LAST_PDU"));
        t = b.clone();
        t[3] = 8;
        assertTrue(reject(t, PLAIN).contains("PDO 8"));
        t = b.clone();
        Le.put32(t, 16, 4095);
        assertTrue(reject(t, PLAIN).contains("DATAL 4095"));
        t = b.clone();
        Le.put32(t, 4, 10);
        assertTrue(reject(t, PLAIN).contains("PLEN 10"));
        assertTrue(assertThrows(NvmeProtocolException.class, () -> PduCodec.decode(b, PLAIN, 1024))
                .getMessage()
                .contains("at most 1024"));
        byte[] resp = PduCodec.encode(new Pdu.CapsuleResp(new byte[16]), PLAIN);
        byte[] longResp = Arrays.copyOf(resp, 32);
        Le.put32(longResp, 4, 32);
        assertTrue(reject(longResp, PLAIN).contains("carries no data"));
        byte[] r2t = PduCodec.encode(new Pdu.R2T(1, 1, 0, 4096), PLAIN);
        Le.put32(r2t, 16, 0);
        assertTrue(reject(r2t, PLAIN).contains("R2TL 0"));
        byte[] ic = PduCodec.encode(new Pdu.IcResp(0, 0, false, false, 131072), PLAIN);
        ic[11] = 4;
        assertTrue(reject(ic, PLAIN).contains("DGST"));
    }

    @Test
    void readerRefusesAHostilePlenBeforeAllocatingAndReportsTruncation() throws IOException {
        byte[] huge = PduCodec.encode(new Pdu.CapsuleResp(new byte[16]), PLAIN);
        huge[0] = Pdu.C2H_DATA;
        Le.put32(huge, 4, Integer.MAX_VALUE);
        huge[3] = 24;
        PduReader r = new PduReader(new ByteArrayInputStream(huge), 1 << 20);
        assertTrue(
                assertThrows(NvmeProtocolException.class, r::read).getMessage().contains("at most"));
        byte[] b = c2h(PLAIN);
        PduReader cut = new PduReader(new ByteArrayInputStream(Arrays.copyOf(b, 1000)), 1 << 20);
        assertTrue(assertThrows(NvmeProtocolException.class, cut::read)
                .getMessage()
                .contains("truncated C2HData"));
        PduReader shortHeader = new PduReader(new ByteArrayInputStream(Arrays.copyOf(b, 5)), 1 << 20);
        assertTrue(assertThrows(NvmeProtocolException.class, shortHeader::read)
                .getMessage()
                .contains("truncated PDU"));
        PduReader clean = new PduReader(new ByteArrayInputStream(b), 1 << 20);
        assertEquals(Pdu.C2H_DATA, clean.read().type());
        assertNull(clean.read());
    }
}
