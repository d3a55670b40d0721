package io.rdma4j.nvmeof;

/**
 * The peer sent something the NVMe/TCP (or NVMe-oF) protocol does not allow: a malformed or unexpected PDU, a bad
 * digest, data outside the command's buffer. The connection it came on is closed; outstanding commands on it fail.
 */
public class NvmeProtocolException extends NvmeException {
    public NvmeProtocolException(String message) {
        super(message);
    }

    public NvmeProtocolException(String message, Throwable cause) {
        super(message, cause);
    }
}
