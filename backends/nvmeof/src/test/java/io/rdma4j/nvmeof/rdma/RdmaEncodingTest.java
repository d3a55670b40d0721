package io.rdma4j.nvmeof.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.internal.Sqe;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The NVMe/RDMA wire formats, byte for byte. Linux declares the private data in {@code include/linux/nvme-rdma.h},
 * which is kernel-internal (no distribution installs it), so the golden bytes come from the NVMe RDMA Transport
 * Specification's figures: RDMA_CM_REQUEST private data is RECFMT (bytes 0-1), QID (2-3), HRQSIZE (4-5), HSQSIZE (6-7),
 * CNTLID (8-9), reserved (10-31), all little-endian; RDMA_CM_ACCEPT is RECFMT, CRQSIZE, 28 reserved; RDMA_CM_REJECT is
 * RECFMT, STS. A keyed SGL data block descriptor (NVMe base specification) is ADDRESS (bytes 0-7), LENGTH (8-10), KEY
 * (11-14), SGL identifier (15: type 4h in bits 7:4, subtype 0h "address" in 3:0).
 */
class RdmaEncodingTest {
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", ""));
    }

    @Test
    void connectRequestPrivateDataMatchesTheSpecificationLayout() {
        // I/O queue 3 of controller 0x1234, 128 receive slots, 128 commands in flight (HSQSIZE 0's based: 127)
        assertArrayEquals(
                hex("0000 0300 8000 7f00 3412" + "00".repeat(22)), RdmaCm.connectRequest(3, 128, 127, 0x1234));
        // the admin queue as Linux connects it: NVME_AQ_DEPTH 32, CNTLID 0
        assertArrayEquals(hex("0000 0000 2000 1f00 0000" + "00".repeat(22)), RdmaCm.connectRequest(0, 32, 31, 0));
        assertEquals(RdmaCm.REQUEST_SIZE, RdmaCm.connectRequest(1, 2, 1, 1).length);
        assertTrue(RdmaCm.REQUEST_SIZE <= 56, "rdma_connect private data over RC is at most 56 bytes");
        assertThrows(IllegalArgumentException.class, () -> RdmaCm.connectRequest(0x10000, 2, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> RdmaCm.connectRequest(1, -1, 1, 0));
    }

    @Test
    void acceptAndRejectPrivateDataDecode() {
        assertEquals(128, RdmaCm.acceptedQueueSize(hex("0000 8000" + "00".repeat(28))));
        assertEquals(-1, RdmaCm.acceptedQueueSize(new byte[0]), "no private data: nothing to check");
        assertEquals(-1, RdmaCm.acceptedQueueSize(hex("0100 8000")), "an unknown record format is not read");
        assertEquals(4, RdmaCm.rejectStatus(hex("0000 0400")));
        assertEquals("invalid host send queue size (NVME_RDMA_CM_INVALID_HSQSIZE)", RdmaCm.rejectStatusName(4));
        assertEquals(
                "no resources (NVME_RDMA_CM_NO_RSC)", RdmaCm.rejectStatusName(RdmaCm.rejectStatus(hex("0000 0600"))));
        assertEquals("invalid controller ID (NVME_RDMA_CM_INVALID_CNTLID)", RdmaCm.rejectStatusName(9));
        assertEquals("unknown status 0x42", RdmaCm.rejectStatusName(0x42));
        assertEquals(-1, RdmaCm.rejectStatus(hex("0000")), "a truncated reject is not an NVMe/RDMA reject");
    }

    @Test
    void keyedSglDescriptorCarriesAddressLengthAndKey() {
        byte[] sqe = Sqe.readWrite(false, 1, 0, 8);
        Sqe.keyed(sqe, 0x00007f0012345000L, 4096 * 16, 0xa1b2c3d4);
        assertArrayEquals(
                hex("0050341200 7f0000" + "000001" + "d4c3b2a1" + "40"), java.util.Arrays.copyOfRange(sqe, 24, 40));
        assertEquals(Sqe.SGL_KEYED_DATA_BLOCK, Sqe.sglIdentifier(sqe));
        assertEquals(
                0x40,
                Sqe.SGL_KEYED_DATA_BLOCK,
                "type 4h (keyed data block), subtype 0h (address): no remote invalidate");
        assertEquals(Sqe.FLAGS_SGL, sqe[1] & 0xc0, "PSDT selects SGLs for the data pointer");
        assertThrows(IllegalArgumentException.class, () -> Sqe.keyed(sqe, 0, 1 << 24, 1));
    }

    @Test
    void inCapsuleDataIsAnOffsetDescriptorFromTheCapsuleStart() {
        byte[] sqe = Sqe.readWrite(true, 1, 0, 8);
        Sqe.inCapsule(sqe, 4096);
        assertArrayEquals(hex("0000000000000000 00100000 000000 01"), java.util.Arrays.copyOfRange(sqe, 24, 40));
    }

    @Test
    void configRefusesWhatAKeyedSglCannotCarry() {
        var t = java.time.Duration.ofSeconds(1);
        assertThrows(IllegalArgumentException.class, () -> new RdmaQueue.Config(1, 1, 1, t, t, 4096, 0));
        assertThrows(IllegalArgumentException.class, () -> new RdmaQueue.Config(1, 32, 1, t, t, 1 << 24, 0));
        assertThrows(IllegalArgumentException.class, () -> new RdmaQueue.Config(1, 32, 1, t, t, 4096, -1));
    }
}
