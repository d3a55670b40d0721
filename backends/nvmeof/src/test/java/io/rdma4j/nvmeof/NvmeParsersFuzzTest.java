package io.rdma4j.nvmeof;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.rdma.RdmaCm;
import io.rdma4j.nvmeof.tcp.PduCodec;
import io.rdma4j.nvmeof.tcp.PduReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Fuzz targets for every parser of what an NVMe-oF target sends, and of the checkpoint manifest read back from a drive.
 * Each parser may refuse its input only with the exception it documents ({@link NvmeProtocolException} for the wire,
 * {@link NvmeStatusException} for an inactive namespace, {@link NvmeException} for a manifest); anything else (an index
 * out of bounds, a negative size, an allocation sized by the peer) is a finding. {@code ./rdma4j test} replays the
 * committed inputs under {@code src/test/resources/io/rdma4j/nvmeof/NvmeParsersFuzzTestInputs/}; {@code ./rdma4j fuzz}
 * runs a campaign.
 */
class NvmeParsersFuzzTest {
    /** The largest data one PDU may carry in these targets: small, so that a fuzzed PLEN is refused by the limit. */
    private static final int MAX_DATA = 64 << 10;

    /** Settings of the connection from the first input byte: digests on or off, and a data alignment. */
    private static PduCodec.Settings settings(byte b) {
        return new PduCodec.Settings((b & 1) != 0, (b & 2) != 0, (b >>> 2) & 0x1f);
    }

    /** A stream of PDUs as a target sends them, read until it ends or is refused. */
    @FuzzTest(maxDuration = "30s")
    void pduStream(byte[] input) throws IOException {
        if (input.length == 0) {
            return;
        }
        PduReader reader = new PduReader(new ByteArrayInputStream(input, 1, input.length - 1), MAX_DATA);
        reader.settings(settings(input[0]), MAX_DATA);
        try {
            while (reader.read() != null) {
                // every PDU the reader accepts is a complete, checked one
            }
        } catch (NvmeProtocolException refused) {
            // the documented refusal
        }
    }

    /** One PDU of exactly the bytes given. */
    @FuzzTest(maxDuration = "30s")
    void pdu(byte[] input) {
        if (input.length == 0) {
            return;
        }
        try {
            PduCodec.decode(Arrays.copyOfRange(input, 1, input.length), settings(input[0]), MAX_DATA);
        } catch (NvmeProtocolException refused) {
            // the documented refusal
        }
    }

    /** Identify Controller and Identify Namespace data: always 4096 bytes on the wire, any content. */
    @FuzzTest(maxDuration = "30s")
    void identify(byte[] input) {
        byte[] d = Arrays.copyOf(input, ControllerInfo.SIZE);
        try {
            ControllerInfo info = ControllerInfo.parse(d);
            info.maxTransferBytes(4096);
            info.inCapsuleDataBytes();
            info.versionString();
        } catch (NvmeProtocolException refused) {
            // the documented refusal
        }
        try {
            NamespaceInfo.parse(1, d).bytes();
        } catch (NvmeProtocolException refused) {
            // the documented refusal
        } catch (NvmeStatusException inactive) {
            // all-zero data: the spec's answer for an inactive namespace, reported as Invalid Namespace
        }
    }

    /** A discovery log page of any length, with any record count. */
    @FuzzTest(maxDuration = "30s")
    void discoveryLog(byte[] input) {
        try {
            DiscoveryLog log = DiscoveryLog.parse(input);
            for (DiscoveryLog.Entry e : log.entries()) {
                e.transportName();
                e.addressFamilyName();
                e.subsystemTypeName();
            }
        } catch (NvmeProtocolException refused) {
            // the documented refusal
        }
    }

    /** The private data of an NVMe/RDMA accept or reject: answered with -1 when it is not one, never a throw. */
    @FuzzTest(maxDuration = "30s")
    void rdmaCmPrivateData(byte[] input) {
        RdmaCm.acceptedQueueSize(input);
        int sts = RdmaCm.rejectStatus(input);
        if (sts >= 0) {
            RdmaCm.rejectStatusName(sts);
        }
    }

    /**
     * A checkpoint manifest as read back from a drive. When the first input byte is odd, the target writes a correct
     * CRC32C over the bytes the header claims, so that the entries behind the checksum are fuzzed too.
     */
    @FuzzTest(maxDuration = "30s")
    void checkpointManifest(byte[] input) {
        if (input.length == 0) {
            return;
        }
        byte[] b = Arrays.copyOfRange(input, 1, Checkpoint.MANIFEST_BYTES + 1);
        int end = Le.i32(b, 24);
        if ((input[0] & 1) != 0 && end >= 0 && end <= b.length - 4) {
            CRC32C crc = new CRC32C();
            crc.update(b, 0, end);
            int v = (int) crc.getValue();
            b[end] = (byte) v;
            b[end + 1] = (byte) (v >>> 8);
            b[end + 2] = (byte) (v >>> 16);
            b[end + 3] = (byte) (v >>> 24);
        }
        try {
            Checkpoint.decode(b, "the fuzzed drive");
        } catch (NvmeException refused) {
            // the documented refusal
        }
    }
}
